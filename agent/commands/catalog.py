"""Command files: Markdown prompts in `.claude/commands/`, `.cairn/commands/` and the user's folders.

A Claude Code user's commands work unchanged: the project's `.claude/commands/` and
`.cairn/commands/`, then the user's `~/.claude/commands/` (or `$CLAUDE_CONFIG_DIR/commands`)
and cairn's own config folder; a project's command wins over the user's of the same name, as
in Claude Code. A subfolder is a namespace as Claude Code shows it: `frontend/component.md` is
`/component`, described with "(project:frontend)", and `/frontend:component` names it too
(when two subfolders hold the same name). Front matter is read as Claude Code's:
`description`, `argument-hint`, `model`, `allowed-tools`, `disable-model-invocation`.

It stays cheap: files are read only when a listing or a lookup asks for them, and a bad file is
skipped, never an exception. A project's files come from a repository that may be hostile:
they are read through agent/fs/repo_files.py (no symlink out of the workspace, no FIFO, a size
cap), and what was skipped is said in the `notices` a caller passes. What a command may widen
(its `allowed-tools`, its `model`) is decided where it runs (agent/commands/invocation.py):
here a command only says where it came from (`scope`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent.fs.front_matter import split
from agent.fs.repo_files import FileMissing, RepoFileError, list_repo_folder, read_own_file, read_repo_file
from agent.paths import claude_dir, config_dir

# A command is a prompt of a few lines; a bigger file is a mistake (or a repository's trick).
MAX_COMMAND_BYTES = 256 * 1024
DESCRIPTION_MAX = 80
MAX_DEPTH = 3  # subfolders below a commands folder
_NAME = re.compile(r"[a-z0-9_-]+")
_QUALIFIED = re.compile(r"(?:[a-z0-9_-]+:)*[a-z0-9_-]+")
PROJECT_FOLDERS = (Path(".claude", "commands"), Path(".cairn", "commands"))

Scope = Literal["project", "user"]


@dataclass
class FileCommand:
    """One command file. `name`: what follows the slash (the file's stem, lower case);
    `namespace`: its subfolders joined with `:` ("" at the top)."""

    name: str
    description: str
    path: Path
    body: str
    scope: Scope = "project"
    namespace: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disable_model_invocation: bool = False

    @property
    def qualified(self) -> str:
        return f"{self.namespace}:{self.name}" if self.namespace else self.name

    @property
    def label(self) -> str:
        """Where it comes from, as Claude Code shows it: `project`, `user:frontend`."""
        return f"{self.scope}:{self.namespace}" if self.namespace else self.scope


@dataclass(frozen=True)
class Folder:
    """Where commands live. `workspace`: the project's, read through agent/fs/repo_files.py (a
    cloned repository's symlink or FIFO there must not be read or block); None: the user's
    own folder, read as their files (symlinks followed, regular files only)."""

    path: Path
    scope: Scope
    workspace: Path | None = None
    relative: Path | None = None  # the folder below `workspace`


def folders(workspace: Path) -> list[Folder]:
    """Where commands live, in order of precedence: the project's, then the user's."""
    ws = Path(workspace)
    found = [Folder(ws / relative, "project", ws, relative) for relative in PROJECT_FOLDERS]
    found.append(Folder(claude_dir() / "commands", "user"))
    found.append(Folder(config_dir() / "commands", "user"))
    return found


def _say(notices: list[str] | None, text: str) -> None:
    if notices is not None and text not in notices:
        notices.append(text)


def _names(folder: Folder, below: tuple[str, ...], notices: list[str] | None) -> list[str] | None:
    """The entries of the folder (or its subfolder `below`); None when it is not a folder."""
    try:
        if folder.workspace is not None:
            return list_repo_folder(folder.workspace, Path(folder.relative or ".", *below), follow_inside=True)
        return sorted(os.listdir(Path(folder.path, *below)))
    except FileMissing:
        return None
    except RepoFileError as exc:
        if not exc.reason.startswith("is not a folder"):
            _say(notices, f"Not reading the project commands in {exc.path}: it {exc.reason}")
        return None
    except OSError:
        return None


def entries(folder: Folder, notices: list[str] | None) -> list[tuple[str, tuple[str, ...], str]]:
    """(name, subfolders, file name) of the folder's command files, without reading them; top
    level first."""
    out: list[tuple[str, tuple[str, ...], str]] = []
    pending: list[tuple[str, ...]] = [()]
    while pending:
        below = pending.pop(0)
        for entry in _names(folder, below, notices) or []:
            path = Path(entry)
            if path.suffix == ".md" and _NAME.fullmatch(path.stem.lower()):
                out.append((path.stem.lower(), below, entry))
            elif not path.suffix and _NAME.fullmatch(entry.lower()) and len(below) < MAX_DEPTH:
                pending.append((*below, entry))
    return out


def _text(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value).strip()


def _hint(value: object) -> str:
    """`argument-hint: [message]` is a YAML list to the parser, but Claude Code shows it as written."""
    if isinstance(value, list):
        return " ".join(f"[{item}]" for item in value)
    return " ".join(_text(value).split())


def _tools(value: object) -> list[str]:
    """`allowed-tools` as Claude Code writes it: a comma list, or a YAML list. A comma inside
    parentheses (`Bash(git commit:*)`) stays with its rule."""
    items = value if isinstance(value, list) else [value] if value else []
    rules: list[str] = []
    for item in items:
        depth, current = 0, ""
        for char in str(item):
            depth += (char == "(") - (char == ")")
            if char == "," and depth == 0:
                rules.append(current.strip())
                current = ""
            else:
                current += char
        rules.append(current.strip())
    return [rule for rule in rules if rule]


def parse(name: str, path: Path, text: str, *, scope: Scope = "project", namespace: str = "") -> FileCommand:
    """Front matter (`---` lines) if any, then the body."""
    fields, body = split(text)
    body = body.strip()
    fields = {str(k).lower(): v for k, v in fields.items()}
    description = " ".join(_text(fields.get("description")).split())
    if not description:
        first = next((line.strip() for line in body.split("\n") if line.strip()), "")
        description = first.lstrip("#").strip()
    if len(description) > DESCRIPTION_MAX:
        description = description[: DESCRIPTION_MAX - 1].rstrip() + "…"
    model = _text(fields.get("model")) or None
    return FileCommand(
        name=name,
        description=description,
        path=path,
        body=body,
        scope=scope,
        namespace=namespace,
        argument_hint=_hint(fields.get("argument-hint")),
        model=model if model != "inherit" else None,
        allowed_tools=_tools(fields.get("allowed-tools")),
        disable_model_invocation=_text(fields.get("disable-model-invocation")).lower() == "true",
    )


def _load(
    name: str, below: tuple[str, ...], file: str, folder: Folder, notices: list[str] | None
) -> FileCommand | None:
    """The command in the file, or None (said in `notices`) when it cannot be one: refused by
    agent/fs/repo_files.py (a symlink out of the workspace, a FIFO, too large), not UTF-8, a folder."""
    path = Path(folder.path, *below, file)
    try:
        if folder.workspace is not None:
            raw = read_repo_file(
                folder.workspace,
                Path(folder.relative or ".", *below, file),
                max_bytes=MAX_COMMAND_BYTES,
                follow_inside=True,
            )
        else:
            raw = read_own_file(path, max_bytes=MAX_COMMAND_BYTES)
        return parse(name, path, raw.decode("utf-8"), scope=folder.scope, namespace=":".join(below).lower())
    except FileMissing:
        return None  # a dangling symlink: no command
    except RepoFileError as exc:
        _say(notices, f"Skipping the command /{name} ({exc.path}): it {exc.reason}")
    except UnicodeDecodeError:
        _say(notices, f"Skipping the command /{name} ({path}): it is not UTF-8 text")
    except ValueError:
        pass
    return None


def list_commands(workspace: Path, notices: list[str] | None = None) -> list[FileCommand]:
    """Every readable command, sorted by name; the project's wins over the user's of the same
    name, a folder's top level over its subfolders. `notices` gets one line per command file
    skipped, saying why."""
    found: dict[str, FileCommand] = {}
    for folder in folders(workspace):
        for name, below, file in entries(folder, notices):
            if name not in found:
                command = _load(name, below, file, folder, notices)
                if command is not None:
                    found[name] = command
    return sorted(found.values(), key=lambda c: c.name)


def command_notices(workspace: Path) -> list[str]:
    """What `list_commands` skipped, for a front end to show (in /help, at start)."""
    notices: list[str] = []
    list_commands(workspace, notices)
    return notices


def find_command(workspace: Path, name: str, notices: list[str] | None = None) -> FileCommand | None:
    """The command called `name` (case-insensitive; `frontend:component` names the one in that
    subfolder), reading only its file; `notices` as in list_commands."""
    name = name.lower()
    if not _QUALIFIED.fullmatch(name):
        return None
    *space, stem = name.split(":")
    for folder in folders(workspace):
        for entry_name, below, file in entries(folder, notices):
            if entry_name == stem and (not space or [b.lower() for b in below] == space):
                command = _load(stem, below, file, folder, notices)
                if command is not None:
                    return command
    return None
