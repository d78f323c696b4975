"""A tool call as a hook expects it (Claude Code's shape), and its `updatedInput` back.

Hooks are written for Claude Code's tools: a guard reads `tool_name == "Bash"` and
`tool_input.command`, or `tool_input.file_path` (absolute). Shown cairn's names, such a guard
placed in cairn's own config failed open, so every hook, whichever file configured it (SPEC §13
item 9), sees Claude Code's names (agent/hooks/names.py), with the arguments renamed as
../shared/FORMATS.md lists them. A tool Claude Code has no counterpart for keeps cairn's name
and arguments. Pure.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from agent.hooks.names import CLAUDE_NAME

# cairn's argument → Claude Code's, per cairn tool. Arguments not listed keep their name.
_RENAMES: dict[str, dict[str, str]] = {
    "filesystem-read": {"filePath": "file_path"},
    "filesystem-edit": {
        "filePath": "file_path",
        "searchContent": "old_string",
        "replaceContent": "new_string",
        "replaceAll": "replace_all",
    },
    "filesystem-create": {"filePath": "file_path"},
    "filesystem-search": {"maxResults": "head_limit"},  # caseSensitive is Grep's `-i`, inverted
    "filesystem-find": {},
    "web-fetch": {},
    "web-search": {"allowedDomains": "allowed_domains", "blockedDomains": "blocked_domains"},
    "task-output": {"taskId": "bash_id"},
    "task-stop": {"taskId": "shell_id"},
}
_PATHS = ("file_path", "path")  # Claude Code's paths are absolute


def _absolute(value: Any, workspace: Path) -> Any:
    if isinstance(value, str) and value and not Path(value).is_absolute():
        return str(workspace / value)
    return value


def claude_call(tool: str, data: dict[str, Any], workspace: Path) -> tuple[str, dict[str, Any]]:
    """(tool_name, tool_input) as Claude Code would send them for cairn's call."""
    name = CLAUDE_NAME.get(tool)
    if name is None:
        return tool, dict(data)
    if tool == "terminal-execute":
        out: dict[str, Any] = {"command": data.get("command", "")}
        if isinstance(data.get("timeout"), (int, float)):
            out["timeout"] = int(data["timeout"] * 1000)  # Claude Code counts milliseconds
        if data.get("workingDirectory"):
            out["command"] = f"cd {shlex.quote(str(data['workingDirectory']))} && {out['command']}"
        if data.get("background"):
            out["run_in_background"] = True
        return name, out
    renames = _RENAMES.get(tool, {})
    out = {}
    for key, value in data.items():
        if tool == "filesystem-search" and key == "caseSensitive":
            out["-i"] = not value
            continue
        out[renames.get(key, key)] = value
    if tool == "filesystem-read" and isinstance(data.get("startLine"), int):
        out["offset"] = out.pop("startLine")
        end = out.pop("endLine", None)
        if isinstance(end, int):
            out["limit"] = max(end - out["offset"] + 1, 1)
    for key in _PATHS:
        if key in out:
            out[key] = _absolute(out[key], workspace)
    return name, out


def cairn_input(tool: str, updated: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """A Claude Code hook's `updatedInput` as arguments of cairn's `tool`: renamed back, over
    the call's own arguments (what it did not mention stays as the model sent it)."""
    if tool not in CLAUDE_NAME:
        return {**original, **updated}
    if tool == "terminal-execute":
        out = dict(original)
        if isinstance(updated.get("command"), str):
            out["command"] = updated["command"]
            out.pop("workingDirectory", None)  # a `cd` the hook saw is part of its command now
        if isinstance(updated.get("timeout"), (int, float)):
            out["timeout"] = updated["timeout"] / 1000
        if isinstance(updated.get("run_in_background"), bool):
            out["background"] = updated["run_in_background"]
        return out
    back = {claude: cairn for cairn, claude in _RENAMES.get(tool, {}).items()}
    out = dict(original)
    for key, value in updated.items():
        if tool == "filesystem-search" and key == "-i":
            out["caseSensitive"] = not value
        elif tool == "filesystem-read" and key == "offset" and isinstance(value, int):
            out["startLine"] = value
            limit = updated.get("limit")
            if isinstance(limit, int):
                out["endLine"] = value + max(limit, 1) - 1
        elif tool == "filesystem-read" and key == "limit":
            continue
        else:
            out[back.get(key, key)] = value
    return out
