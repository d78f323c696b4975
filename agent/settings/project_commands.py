"""Project slash commands: Markdown prompts in `.cairn/commands/` (and the user's config folder).

`/review src/x.py` with a `.cairn/commands/review.md` sends the file's body as the user
message, wrapped in a `<command name="review">` block so condense can carry the active
workflow forward (agent/context/condense.py looks for these blocks). Both the TUI and
headless mode expand through here. It stays cheap: no heavy imports, files are read only
when a listing or a lookup asks for them, and a bad file is skipped, never an exception.
The project's files come from a repository that may be hostile: they are read through
agent/fs/repo_files.py (no symlink out of the workspace, no FIFO, a size cap), and what was
skipped is said in the `notices` a caller passes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

from agent.fs.repo_files import FileMissing, RepoFileError, list_repo_folder, read_own_file, read_repo_file
from agent.paths import config_dir

ARGUMENTS = "$ARGUMENTS"
# A command is a prompt of a few lines; a bigger file is a mistake (or a repository's trick).
MAX_COMMAND_BYTES = 256 * 1024
DESCRIPTION_MAX = 80
_NAME = re.compile(r"[a-z0-9_-]+")
_INVOCATION = re.compile(r"/(\S+)(?:\s+(.*))?", re.S)


class ProjectCommand(BaseModel):
    name: str
    description: str
    path: Path
    body: str


class _Folder(NamedTuple):
    """Where commands live. `workspace`: the project's, read through agent/fs/repo_files.py (a
    cloned repository's symlink or FIFO there must not be read or block); None: the user's
    own folder, read as their files (symlinks followed, regular files only)."""

    path: Path
    workspace: Path | None = None
    relative: Path | None = None  # the folder below `workspace`


def _folders(workspace: Path) -> list[_Folder]:
    """Where commands live, in order of precedence: the project's, then the user's."""
    relative = Path(".cairn", "commands")
    return [_Folder(Path(workspace) / relative, Path(workspace), relative), _Folder(config_dir() / "commands")]


def _name_of(path: Path) -> str | None:
    name = path.stem.lower()
    return name if path.suffix == ".md" and _NAME.fullmatch(name) else None


def _say(notices: list[str] | None, text: str) -> None:
    if notices is not None and text not in notices:
        notices.append(text)


def _entries(folder: _Folder, notices: list[str] | None) -> list[tuple[str, Path]]:
    """(name, path) of the folder's command files, without reading them; [] when it is missing."""
    try:
        if folder.workspace is not None:
            names = list_repo_folder(folder.workspace, folder.relative or ".", follow_inside=True)
        else:
            names = sorted(os.listdir(folder.path))
    except FileMissing:
        return []
    except RepoFileError as exc:
        _say(notices, f"Not reading the project commands in {exc.path}: it {exc.reason}")
        return []
    except OSError:
        return []
    out = []
    for entry in names:
        name = _name_of(Path(entry))
        if name is not None:
            out.append((name, folder.path / entry))
    return out


def parse(name: str, path: Path, text: str) -> ProjectCommand:
    """Front matter (`---` lines, `description:`) if any, then the body."""
    body, description = text.replace("\r\n", "\n").lstrip("\ufeff"), ""
    lines = body.split("\n")
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            for line in lines[1:end]:
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "description":
                    description = value.strip().strip("\"'").strip()
            body = "\n".join(lines[end + 1 :])
    body = body.strip()
    if not description:
        first = next((line.strip() for line in body.split("\n") if line.strip()), "")
        description = first.lstrip("#").strip()
    if len(description) > DESCRIPTION_MAX:
        description = description[: DESCRIPTION_MAX - 1].rstrip() + "…"
    return ProjectCommand(name=name, description=description, path=path, body=body)


def _load(name: str, path: Path, folder: _Folder, notices: list[str] | None) -> ProjectCommand | None:
    """The command in `path`, or None (said in `notices`) when it cannot be one: refused by
    agent/fs/repo_files.py (a symlink out of the workspace, a FIFO, too large), not UTF-8, a folder."""
    try:
        if folder.workspace is not None:
            raw = read_repo_file(
                folder.workspace,
                (folder.relative or Path()) / path.name,
                max_bytes=MAX_COMMAND_BYTES,
                follow_inside=True,
            )
        else:
            raw = read_own_file(path, max_bytes=MAX_COMMAND_BYTES)
        return parse(name, path, raw.decode("utf-8"))
    except FileMissing:
        return None  # a dangling symlink: no command
    except RepoFileError as exc:
        _say(notices, f"Skipping the command /{name} ({exc.path}): it {exc.reason}")
    except UnicodeDecodeError:
        _say(notices, f"Skipping the command /{name} ({path}): it is not UTF-8 text")
    except ValueError:
        pass
    return None


def list_commands(workspace: Path, notices: list[str] | None = None) -> list[ProjectCommand]:
    """Every readable command, sorted by name; the project's wins over the user's of the same
    name. `notices` gets one line per command file skipped, saying why."""
    found: dict[str, ProjectCommand] = {}
    for folder in _folders(workspace):
        for name, path in _entries(folder, notices):
            if name not in found:
                command = _load(name, path, folder, notices)
                if command is not None:
                    found[name] = command
    return sorted(found.values(), key=lambda c: c.name)


def command_notices(workspace: Path) -> list[str]:
    """What `list_commands` skipped, for a front end to show (in /help, at start)."""
    notices: list[str] = []
    list_commands(workspace, notices)
    return notices


def find_command(workspace: Path, name: str, notices: list[str] | None = None) -> ProjectCommand | None:
    """The command called `name` (case-insensitive), reading only its file; `notices` as in
    list_commands."""
    name = name.lower()
    if not _NAME.fullmatch(name):
        return None
    for folder in _folders(workspace):
        for entry_name, path in _entries(folder, notices):
            if entry_name == name:
                command = _load(name, path, folder, notices)
                if command is not None:
                    return command
    return None


def expand(command: ProjectCommand, args: str) -> str:
    """The user message: the body in a `<command>` block, `$ARGUMENTS` replaced by `args`
    (or, when the body has no `$ARGUMENTS`, `args` after the block)."""
    args = args.strip()
    body, tail = command.body, ""
    if ARGUMENTS in body:
        body = body.replace(ARGUMENTS, args)
    elif args:
        tail = "\n\n" + args
    return f'<command name="{command.name}">\n{body}\n</command>{tail}'


def expand_text(workspace: Path, text: str, notices: list[str] | None = None) -> str | None:
    """`/name args` → the expanded message; None when `text` does not name a project command
    (`notices`: a command file skipped on the way, as in list_commands)."""
    match = _INVOCATION.fullmatch(text.strip())
    if match is None:
        return None
    command = find_command(workspace, match.group(1), notices)
    return expand(command, match.group(2) or "") if command is not None else None
