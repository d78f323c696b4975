"""What a hook did, in one line for the user: blocked a tool call, changed its input, added
context for the model, sent the model back to work.

A hook acts on what the model sees (a refusal as the tool's result, context with the prompt);
without this line the user sees only the effect ("Error: • Use trash instead of rm -rf") and
not which hook caused it. Pure: agent/hooks/runs.py reports each (hook, answer) it ran, the
loop turns the action into an event (agent/turn/events.py HookActed) and the front ends show it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal

from agent.hooks.answer import HookAnswer

Action = Literal["blocked", "changed_input", "added_context", "went_on"]
# Programs that run the hook's script: the script is its name ("python3 ~/.claude/hooks/guard.py").
RUNNERS = frozenset(
    {
        "python",
        "python3",
        "node",
        "bash",
        "sh",
        "zsh",
        "ruby",
        "perl",
        "deno",
        "bun",
        "npx",
        "uv",
        "uvx",
        "run",
        "env",
        "exec",
    }
)
# Events whose hooks' context goes to the model (PostToolUse's feedback too).
CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart", "SubagentStart", "PostToolUse", "PostToolUseFailure"})
MAX_LINE_CHARS = 74  # one line of the chat at 80 columns (a notice's padding); the model gets the whole text


@dataclass(frozen=True)
class HookAction:
    event: str
    hook: str  # the command's short name
    action: Action
    detail: str = ""
    subject: str = ""  # the tool, for PreToolUse

    @property
    def message(self) -> str:
        """One line of the chat at 80 columns; the detail's first line, cut to fit."""
        head = f"{self.event} hook {self.hook}"
        match self.action:
            case "blocked":
                text = f"Blocked by {head}"
            case "changed_input":
                text = f"Input of {self.subject} changed by {head}" if self.subject else f"Input changed by {head}"
            case "went_on":
                text = f"{head} sent {'the subagent' if self.event == 'SubagentStop' else 'the model'} back to work"
            case "added_context":
                lines = len(self.detail.strip().splitlines()) or 1
                text = f"{head} added context ({lines} line{'s' if lines != 1 else ''})"
        first = self.detail.strip().splitlines()[0].strip() if self.detail.strip() else ""
        line = f"{text}: {first}" if first else text
        return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def short_name(command: str) -> str:
    """How a line names a hook: its script's file name (`bash_guard.py`), else its program's."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    names = [PurePath(w).name for w in words if w and not w.startswith("-") and "=" not in w]
    for name in names:
        if name not in RUNNERS:
            return name
    return names[0] if names else command.strip()[:40]


def actions_of(event: str, hook: str, answer: HookAnswer, tool: str | None, original: Any) -> list[HookAction]:
    """What one hook's answer does that the user should be told (its warnings and messages
    are shown already). A UserPromptSubmit or PreCompact block is the turn's error, which
    names the hook; `original`: the tool call's arguments before the hook."""
    if answer.warning and answer.block == answer.warning:  # a guard that could not run: its warning says so
        return []
    subject = tool or ""
    if event == "PreToolUse":
        if answer.block is not None or answer.stop is not None:
            return [HookAction(event, hook, "blocked", answer.block or answer.stop or "", subject)]
        if answer.updated_input is not None and answer.updated_input != original:
            return [HookAction(event, hook, "changed_input", "", subject)]
        return []
    if event in ("Stop", "SubagentStop"):
        if answer.block is not None and answer.stop is None:
            return [HookAction(event, hook, "went_on", answer.block)]
        return []
    if event in CONTEXT_EVENTS:
        said = [t for t in (answer.block, answer.stop, answer.context) if t] if event.startswith("PostToolUse") else []
        text = "\n\n".join(said) if said else answer.context
        if text and not (event == "UserPromptSubmit" and (answer.block is not None or answer.stop is not None)):
            return [HookAction(event, hook, "added_context", text)]
    return []
