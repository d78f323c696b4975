"""A command's `allowed-tools` (Claude Code's rules) as the approval keys cairn remembers.

Claude Code's `allowed-tools: Bash(git add:*), Bash(git status:*), Edit` lets the command's
turn run those without asking. cairn grants the same through its own keys
(agent/tools/permissions.py), for that turn only, and only where granting cannot widen what
a repository can do without trust (agent/commands/invocation.py decides that):

- `Bash(git add:*)`, `Bash(git add *)`, `Bash(npm test)` → `command:git add` …: a command
  starting with those words, run where a rule-approved command runs (the sandbox);
- `Edit`, `Write`, `MultiEdit`, `NotebookEdit` → `edit` (edits inside the workspace; protected
  files still ask);
- `WebFetch(domain:example.com)` → `fetch:example.com`;
- `mcp__server__tool` (and `mcp__server`, every tool of it) as cairn names MCP tools too;
- `Read`, `Grep`, `Glob`, `LS`, `TodoWrite`, `Task`…: nothing to grant (they never ask here).

What cairn cannot grant as narrowly as written (a bare `Bash`, `Bash(*)`, a pattern in the
middle of a command) is left out and named, never widened to every command.
"""

from __future__ import annotations

import re

from agent.tools.fetch_rules import fetch_key

_RULE = re.compile(r"\s*([A-Za-z0-9_-]+)\s*(?:\((.*)\))?\s*", re.S)
EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "notebookedit"})
UNASKED_TOOLS = frozenset(
    {"read", "grep", "glob", "ls", "todowrite", "todoread", "task", "agent", "notebookread", "websearch"}
)
_CMD_WORDS = re.compile(r"[A-Za-z0-9_./=@+-]+")


def _command_prefix(pattern: str) -> str | None:
    """`git add:*` / `git add *` / `git add` → `git add`; None when it is not plain words."""
    text = pattern.strip()
    if text.endswith(":*") or text.endswith(" *"):
        text = text[:-2]
    words = text.split()
    if not words or not all(_CMD_WORDS.fullmatch(word) for word in words):
        return None
    return " ".join(words)


def grant_keys(rules: list[str]) -> tuple[list[str], list[str]]:
    """(the keys granted, the rules left out)."""
    keys: list[str] = []
    left_out: list[str] = []
    for rule in rules:
        match = _RULE.fullmatch(rule)
        if match is None:
            left_out.append(rule)
            continue
        tool, pattern = match.group(1), match.group(2)
        lowered = tool.lower()
        key: str | None = None
        if lowered == "bash" and pattern is not None:
            prefix = _command_prefix(pattern)
            key = f"command:{prefix}" if prefix else None
        elif lowered in EDIT_TOOLS:
            key = "edit"
        elif lowered == "webfetch" and pattern is not None and pattern.strip().startswith("domain:"):
            key = fetch_key(pattern.strip()[len("domain:") :].strip())
        elif tool.startswith("mcp__") and pattern is None:
            key = tool if tool.count("__") >= 2 else f"{tool}__*"
        elif lowered in UNASKED_TOOLS:
            continue
        if key is None:
            left_out.append(rule)
        elif key not in keys:
            keys.append(key)
    return keys, left_out
