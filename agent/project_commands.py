"""Project slash commands: Markdown prompts in `.cairn/commands/` (and the user's config folder).

`/review src/x.py` with a `.cairn/commands/review.md` sends the file's body as the user
message, wrapped in a `<command name="review">` block so condense can carry the active
workflow forward (agent/context/condense.py looks for these blocks). Both the TUI and
headless mode expand through here. It stays cheap: no heavy imports, files are read only
when a listing or a lookup asks for them, and a bad file is skipped, never an exception.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

ARGUMENTS = "$ARGUMENTS"
DESCRIPTION_MAX = 80
_NAME = re.compile(r"[a-z0-9_-]+")
_INVOCATION = re.compile(r"/(\S+)(?:\s+(.*))?", re.S)


class ProjectCommand(BaseModel):
    name: str
    description: str
    path: Path
    body: str


def _folders(workspace: Path) -> list[Path]:
    """Where commands live, in order of precedence: the project's, then the user's."""
    from agent.config import config_dir  # light: the settings module, imported only when asked

    return [Path(workspace) / ".cairn" / "commands", config_dir() / "commands"]


def _name_of(path: Path) -> str | None:
    name = path.stem.lower()
    return name if path.suffix == ".md" and _NAME.fullmatch(name) else None


def _entries(folder: Path) -> list[tuple[str, Path]]:
    """(name, path) of the folder's command files, without reading them; [] when it is missing."""
    try:
        paths = sorted(folder.iterdir())
    except OSError:
        return []
    out = []
    for path in paths:
        name = _name_of(path)
        if name is not None:
            out.append((name, path))
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
            body = "\n".join(lines[end + 1:])
    body = body.strip()
    if not description:
        first = next((line.strip() for line in body.split("\n") if line.strip()), "")
        description = first.lstrip("#").strip()
    if len(description) > DESCRIPTION_MAX:
        description = description[:DESCRIPTION_MAX - 1].rstrip() + "…"
    return ProjectCommand(name=name, description=description, path=path, body=body)


def _load(name: str, path: Path) -> ProjectCommand | None:
    try:
        return parse(name, path, path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # unreadable, not UTF-8, or a directory named *.md: not a command


def list_commands(workspace: Path) -> list[ProjectCommand]:
    """Every readable command, sorted by name; the project's wins over the user's of the same name."""
    found: dict[str, ProjectCommand] = {}
    for folder in _folders(workspace):
        for name, path in _entries(folder):
            if name not in found:
                command = _load(name, path)
                if command is not None:
                    found[name] = command
    return sorted(found.values(), key=lambda c: c.name)


def find_command(workspace: Path, name: str) -> ProjectCommand | None:
    """The command called `name` (case-insensitive), reading only its file."""
    name = name.lower()
    if not _NAME.fullmatch(name):
        return None
    for folder in _folders(workspace):
        for entry_name, path in _entries(folder):
            if entry_name == name:
                command = _load(name, path)
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


def expand_text(workspace: Path, text: str) -> str | None:
    """`/name args` → the expanded message; None when `text` does not name a project command."""
    match = _INVOCATION.fullmatch(text.strip())
    if match is None:
        return None
    command = find_command(workspace, match.group(1))
    return expand(command, match.group(2) or "") if command is not None else None
