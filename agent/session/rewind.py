"""Rewind (ESC ESC): where the conversation can go back to, and which files come back with it.

The conversation part only moves the session head (the abandoned branch stays stored).
The file part uses the checkpoints the loop records for every change a tool made: for
each file touched after the chosen turn, the bytes it had before the first such change
are written back (a file the agent created is removed). A file whose current bytes are
not what the agent last wrote was changed by someone else since; it is reported and left
alone rather than silently overwritten.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable, Literal

from pydantic import BaseModel

from agent.session.models import FileChange, Message

PREVIEW_CHARS = 80

Action = Literal["restore", "delete", "unchanged", "conflict"]


class RewindPoint(BaseModel):
    """A user turn the conversation can go back to."""

    message_id: str
    created_at: int
    text: str
    preview: str
    files_changed: int  # distinct files the agent changed from this turn on


class FileRestore(BaseModel):
    path: str  # absolute
    display: str  # relative to the workspace when inside it
    action: Action
    before_hash: str | None  # what the file goes back to (None: remove it)


class RewindOutcome(BaseModel):
    text: str  # the chosen turn's prompt, for the input box
    restored: list[str] = []
    removed: list[str] = []
    conflicts: list[str] = []  # changed outside the agent: left as they are


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _display(path: str, workspace: Path) -> str:
    try:
        return str(Path(path).relative_to(workspace))
    except ValueError:
        return path


def _changes_after(path: list[Message], message_id: str, changes: list[FileChange]) -> list[FileChange]:
    index = next(i for i, m in enumerate(path) if m.id == message_id)
    later = {m.id for m in path[index:]}
    return [c for c in changes if c.message_id in later]


def rewind_points(path: list[Message], changes: list[FileChange]) -> list[RewindPoint]:
    """The user turns of the active path, newest first."""
    by_message: dict[str, set[str]] = {}
    for change in changes:
        by_message.setdefault(change.message_id, set()).add(change.path)
    points: list[RewindPoint] = []
    touched: set[str] = set()
    for message in reversed(path):
        touched |= by_message.get(message.id, set())
        if message.role == "user" and message.kind == "message":
            text = message.content or ""
            points.append(RewindPoint(message_id=message.id, created_at=message.created_at, text=text,
                                      preview=one_line(text), files_changed=len(touched)))
    return points


def file_hash(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def read_bytes(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def plan_restore(path: list[Message], message_id: str, changes: list[FileChange], *, workspace: Path,
                 read: Callable[[str], bytes | None] = read_bytes) -> list[FileRestore]:
    """What restoring files to just before `message_id` would do, file by file."""
    first: dict[str, FileChange] = {}
    last: dict[str, FileChange] = {}
    for change in _changes_after(path, message_id, changes):
        first.setdefault(change.path, change)
        last[change.path] = change
    plan: list[FileRestore] = []
    for file_path, change in first.items():
        current = file_hash(read(file_path))
        target = change.before_hash
        if current == target:
            action: Action = "unchanged"
        elif current != last[file_path].after_hash:
            action = "conflict"
        else:
            action = "delete" if target is None else "restore"
        plan.append(FileRestore(path=file_path, display=_display(file_path, workspace), action=action,
                                before_hash=target))
    return sorted(plan, key=lambda f: f.display)


async def apply_restore(store, plan: list[FileRestore], outcome: RewindOutcome) -> RewindOutcome:
    """Write back every planned file; conflicts are only reported."""
    for item in plan:
        if item.action == "conflict":
            outcome.conflicts.append(item.display)
        elif item.action == "delete":
            try:
                os.remove(item.path)
            except FileNotFoundError:
                pass
            outcome.removed.append(item.display)
        elif item.action == "restore":
            data = await store.get_blob(item.before_hash)
            if data is None:  # cannot happen while the change row exists; never write garbage
                outcome.conflicts.append(item.display)
                continue
            _write_back(Path(item.path), data)
            outcome.restored.append(item.display)
    return outcome


def _write_back(target: Path, data: bytes) -> None:
    """Atomic, keeping the file's permission bits when it still exists."""
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.cairn-restore")
    tmp.write_bytes(data)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, target)
