"""Commands as the approval sees them: their simple commands, which of them only read, and
the folders they run in (agent/tools/permissions.py decides on this plan).

Conservative by design: whatever the parse (agent/tools/shell_parse.py) cannot account for,
or a word naming a protected path or one outside the workspace, makes the whole command
unsafe for rules, so it asks. Which programs only read is agent/tools/read_only.py; that
they only read is no proof of what they do with the files around them, so what this plan
lets run unasked runs in the sandbox (agent/tools/sandbox.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePath

from pydantic import BaseModel

from agent.fs.repo_files import within
from agent.tools import read_only as read_only_programs
from agent.tools import shell_parse

MAX_ANALYSED_COMMAND_BYTES = shell_parse.MAX_COMMAND_BYTES
READ_ONLY_RULE = "read-only"  # what covers a part proven to only read
# No real command comes near these; beyond them the check itself would block the event loop.
MAX_CHECKED_PARTS = 200
MAX_CHECKED_PATHS = 1000
# Bash builtins among the read-only programs: no PATH lookup can swap them for a file.
_BUILTINS = {"echo", "pwd", "cd", "true", "set"}


class CommandPlan(BaseModel):
    """A shell command as its simple commands (words only, redirections dropped)."""

    parts: list[list[str]]
    unsafe: str = ""  # why rules must not approve it; "" when they may
    read_only: list[bool] = []  # per part: proven to only read inside the workspace
    cwds: list[str] = []  # the folders its parts may run in (`cd` followed)

    @property
    def runs_git(self) -> bool:
        return any(words[0] == "git" for words in self.parts)

    @property
    def git_read_only(self) -> bool:
        """Every git in it was proven to only read (it runs with git hardened)."""
        flags = self.read_only or [False] * len(self.parts)
        return self.runs_git and all(ro for words, ro in zip(self.parts, flags, strict=False) if words[0] == "git")


def analyse_command(command: str, *, workspace: Path | None = None, cwd: Path | str | None = None) -> CommandPlan:
    """Parse without running anything (`shell_parse`), then check every word that may be a
    path against `cwd` (default: the workspace). Conservative by design: whatever the
    parse cannot account for, or a path that is protected or outside the workspace, makes
    the command unsafe for rules, so it asks. Without a workspace only names are checked
    and nothing counts as read-only."""
    parsed = shell_parse.parse_command(command)
    if parsed.unsafe:
        return CommandPlan(parts=[], unsafe=parsed.unsafe)
    parts = [list(c.words) for c in parsed.commands]
    if len(parts) > MAX_CHECKED_PARTS:
        return CommandPlan(parts=[], unsafe=f"it has too many commands to check ({len(parts)})")
    checked = 0
    ws = os.path.realpath(workspace) if workspace is not None else None
    cwds = {os.path.realpath(os.path.join(ws, cwd or ws))} if ws is not None else set()
    read_only: list[bool] = []
    programs: dict[str, bool] = {}
    for cmd in parsed.commands:
        why, paths = read_only_programs.read_only(cmd.words) if ws is not None else ("no workspace", [])
        if not why and cmd.words[0] not in programs:
            programs[cmd.words[0]] = _program_outside(cmd.words[0], ws)
        if not why and not programs[cmd.words[0]]:
            why = f"{cmd.words[0]} would run from inside the workspace"
        if why:
            paths = read_only_programs.option_paths(cmd.words)
        paths += [r.target for r in cmd.redirects if r.op == "<"]
        for path in dict.fromkeys(paths):
            checked += 1
            if checked > MAX_CHECKED_PATHS:  # each costs a few system calls, on the event loop
                return CommandPlan(parts=parts, unsafe="it names too many paths to check")
            reason = _path_reason(path, ws, cwds)
            if reason:
                return CommandPlan(parts=parts, unsafe=f"it names {path} ({reason})")
        read_only.append(not why)
        if cmd.words[0] == "cd":  # later parts may run there (or here, if cd fails)
            if os.environ.get("CDPATH") and not cmd.words[1].startswith(("/", "./", "../")):
                return CommandPlan(parts=parts, unsafe="cd may follow CDPATH to a folder cairn cannot tell")
            joined = [os.path.join(c, cmd.words[1]) for c in cwds]
            cwds |= {os.path.normpath(j) for j in joined} | {os.path.realpath(j) for j in joined}
    return CommandPlan(parts=parts, read_only=read_only, cwds=sorted(cwds))


def _path_reason(path: str, ws: str | None, cwds: set[str]) -> str:
    """Why a word that may name a file makes the command ask: protected, or outside."""
    if path in ("", "-", "/dev/null"):
        return ""
    if ws is None:
        return protected_reason(path, None)
    if len(path.encode("utf-8", "surrogatepass")) > 4096:
        return "too long to check"
    for cwd in sorted(cwds):
        joined = os.path.join(cwd, path)
        try:
            seen = (os.path.normpath(joined), os.path.realpath(joined))  # as written; symlinks followed
        except (OSError, ValueError):
            return "it cannot be resolved"
        for target in seen:
            reason = protected_reason(target, Path(ws))
            if reason:
                return reason
    return ""


def _program_outside(name: str, ws: str | None) -> bool:
    """A read-only program must be what it claims: a builtin, or found on an all-absolute
    PATH outside the workspace (a repository's own `ls` must not count)."""
    if name in _BUILTINS:
        return True
    search = os.environ.get("PATH", "")
    if any(not entry or not os.path.isabs(entry) for entry in search.split(os.pathsep)):
        return False
    found = shutil.which(name, path=search)
    if found is None or ws is None:  # not found: bash runs nothing
        return True
    real = os.path.realpath(found)
    return not within(real, ws)


# -- protected targets ------------------------------------------------------------------


def protected_reason(path: str, workspace: Path | None) -> str:
    """Why writing `path` must always ask; "" when an "always" rule may cover it.

    Relative paths are taken against the workspace; without a workspace only the
    name-based rules apply. Names compare case-insensitively (`.GIT` is `.git` on macOS)."""
    pure = PurePath(path)
    if workspace is not None:
        ws = Path(workspace).expanduser().resolve()
        target = Path(os.path.normpath(ws / os.path.expanduser(path)))
        if target != ws and ws not in target.parents:
            return "it is outside the workspace"
        pure = PurePath(target.relative_to(ws))
    parts = [part.casefold() for part in pure.parts]
    if ".git" in parts:
        return "files under .git/ control the repository"
    if parts and parts[-1].startswith(".env"):
        return ".env files usually hold secrets"
    if parts[-2:] == [".cairn", "config.toml"]:
        return "the project's cairn config holds these permissions"
    return ""
