"""The names the hooks contract fixes (SPEC §13.5): events, and Claude Code's tool names.

A hook written for Claude Code says `Bash` or `Edit|Write`; cairn's tools are called
`terminal-execute` and `filesystem-edit`. Both spellings match, so a hook configuration
copied from Claude Code works unchanged.

Standard library only: agent/settings/ (on the path to the first screen) and the pure
agent/context/ read these names.
"""

from __future__ import annotations

# Every event a hook may be configured for, in the order Claude Code documents them.
EVENTS = (
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
# The events whose matcher names a tool (Claude Code's name or cairn's).
TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"})
# The events whose matcher selects by another field, as Claude Code's: the field's value is
# matched as a tool name is (`startup|resume`). Events in neither set ignore their matcher.
MATCHED_FIELD = {
    "SessionStart": "source",  # startup | resume | clear | compact
    "SessionEnd": "reason",  # clear | logout | prompt_input_exit | other
    "PreCompact": "trigger",  # manual | auto
    "Notification": "notification_type",  # permission_prompt | idle_prompt
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's

# Claude Code's tool name → cairn's. Several of Claude Code's may name one of cairn's.
CLAUDE_TOOLS = {
    "Bash": "terminal-execute",
    "Read": "filesystem-read",
    "Edit": "filesystem-edit",
    "MultiEdit": "filesystem-edit",
    "Write": "filesystem-create",
    "Grep": "filesystem-search",
    "Glob": "filesystem-find",
    "LS": "filesystem-read",
    "WebFetch": "web-fetch",
    "WebSearch": "web-search",
    "BashOutput": "task-output",
    "KillShell": "task-stop",
    "KillBash": "task-stop",  # its name before Claude Code 2
    "TodoWrite": "todo-write",
    "Task": "subagent",
    "ExitPlanMode": "exit-plan-mode",
}
# cairn's built-in agent → Claude Code's name of it (a SubagentStart/SubagentStop hook's `agent_type`).
CLAUDE_AGENTS = {"general": "general-purpose"}

# cairn's tool name → the one Claude Code name a Claude Code hook is shown (the first above).
CLAUDE_NAME = {cairn: claude for claude, cairn in reversed(CLAUDE_TOOLS.items())}


def claude_aliases(tool: str) -> list[str]:
    """Every Claude Code name of cairn's `tool` (none for a tool Claude Code lacks)."""
    return [claude for claude, cairn in CLAUDE_TOOLS.items() if cairn == tool]


# A user message's meta: what its hooks added for the model (SessionStart and
# UserPromptSubmit output). agent/context/rendered.py puts it after the message's text, so the
# stored prompt stays what the user typed and every build renders the same request.
HOOK_CONTEXT_META = "hook_context"


def closest_event(name: str) -> str | None:
    """The event `name` most likely misspells (`PretoolUse` → `PreToolUse`), or None."""
    import difflib

    by_lower = {event.lower(): event for event in EVENTS}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.7)
    return by_lower[found[0]] if found else None
