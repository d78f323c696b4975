"""Rewind (ESC ESC): where the conversation can go back to, and which files come back with it.

The conversation part only moves the session head (the abandoned branch stays stored).
The file part uses the checkpoints the loop records for every change a tool made: for
each file touched after the chosen turn, the bytes it had before the first such change
are written back (a file the agent created is removed). A file whose current bytes are
not what the agent last wrote was changed by someone else since; it is reported and left
alone rather than silently overwritten. The restore is journaled (session/restore_journal.py)
so a kill -9 half way is finished at the next start.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from agent.session.models import FileChange, Message, Session
from agent.session.restore_journal import (
    Journal,
    JournalEntry,
    file_hash,
    journal_dir,
    pause_for_tests,
    restore_file,
    write_journal,
)

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
    current_hash: str | None = None  # what it holds now (when planned)


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
        # A prompt restated after a condense summary is the same turn as the one typed before it.
        if message.role == "user" and message.kind == "message" and not message.meta.get("restated_from"):
            text = message.content or ""
            points.append(
                RewindPoint(
                    message_id=message.id,
                    created_at=message.created_at,
                    text=text,
                    preview=one_line(text),
                    files_changed=len(touched),
                )
            )
    return points


def read_bytes(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def plan_restore(
    path: list[Message],
    message_id: str,
    changes: list[FileChange],
    *,
    workspace: Path,
    read: Callable[[str], bytes | None] = read_bytes,
) -> list[FileRestore]:
    """What restoring files to just before `message_id` would do, file by file."""
    first: dict[str, FileChange] = {}
    last: dict[str, FileChange] = {}
    for change in _changes_after(path, message_id, changes):
        first.setdefault(change.path, change)
        last[change.path] = change
    plan: list[FileRestore] = []
    for file_path, change in first.items():
        plan.append(
            _restore(
                file_path,
                workspace,
                file_hash(read(file_path)),
                change.before_hash,
                expected=(last[file_path].after_hash,),
            )
        )
    return sorted(plan, key=lambda f: f.display)


def _restore(
    file_path: str, workspace: Path, disk: str | None, wanted: str | None, *, expected: tuple[str | None, ...]
) -> FileRestore:
    """One file's step: nothing when the disk already holds `wanted`; a conflict when it holds
    none of the states cairn left it in (`expected`: changed outside cairn); else bring it back."""
    if disk == wanted:
        action: Action = "unchanged"
    elif disk not in expected:
        action = "conflict"
    else:
        action = "delete" if wanted is None else "restore"
    return FileRestore(
        path=file_path, display=_display(file_path, workspace), action=action, before_hash=wanted, current_hash=disk
    )


def _after_fork(path: list[Message], other: list[Message]) -> set[str]:
    """Ids of `path`'s messages past the last message it shares with `other` (both root first)."""
    shared = 0
    for mine, theirs in zip(path, other, strict=False):
        if mine.id != theirs.id:
            break
        shared += 1
    return {m.id for m in path[shared:]}


def plan_branch_switch(
    current: list[Message],
    target: list[Message],
    changes: list[FileChange],
    *,
    workspace: Path,
    read: Callable[[str], bytes | None] = read_bytes,
) -> list[FileRestore]:
    """What bringing the files to where branch `target` left them would do, file by file.

    Only changes made after the two branches parted count. A file the target branch changed
    goes to its last write there; one only the current branch changed goes back to how it was
    at the fork. The disk is expected either where the current branch left the file or at the
    fork state (a rewind that restored files leaves it there); anything else was changed
    outside cairn and is a conflict, reported and never overwritten."""
    mine, theirs = _after_fork(current, target), _after_fork(target, current)
    fork_state: dict[str, str | None] = {}  # the file's bytes where the branches parted
    current_last: dict[str, str | None] = {}
    target_last: dict[str, str | None] = {}
    for change in changes:
        if change.message_id in mine:
            fork_state.setdefault(change.path, change.before_hash)
            current_last[change.path] = change.after_hash
        elif change.message_id in theirs:
            fork_state.setdefault(change.path, change.before_hash)
            target_last[change.path] = change.after_hash
    plan: list[FileRestore] = []
    for file_path, fork in fork_state.items():
        plan.append(
            _restore(
                file_path,
                workspace,
                file_hash(read(file_path)),
                target_last.get(file_path, fork),
                expected=(current_last.get(file_path, fork), fork),
            )
        )
    return sorted(plan, key=lambda f: f.display)


async def plan_branch_files(store, session: Session, leaf_id: str, *, workspace: Path) -> list[FileRestore]:
    current = await store.active_path(session.id)
    target = await store.active_path(session.id, head_id=leaf_id)
    return plan_branch_switch(current, target, await store.file_changes(session.id), workspace=workspace)


def needs_restore(plan: list[FileRestore]) -> bool:
    """Whether a plan would write or report anything (all unchanged: no question to ask)."""
    return any(item.action != "unchanged" for item in plan)


def journal_entry(item: FileRestore) -> JournalEntry:
    return JournalEntry(
        path=item.path, display=item.display, target_hash=item.before_hash, original_hash=item.current_hash
    )


async def apply_restore(store, plan: list[FileRestore], outcome: RewindOutcome) -> RewindOutcome:
    """Write back every planned file; conflicts are only reported. Each file is checked again
    just before it is written: one changed since the plan is a conflict, not overwritten."""
    for item in plan:
        if item.action == "conflict":
            outcome.conflicts.append(item.display)
        elif item.action in ("delete", "restore"):
            await pause_for_tests()
            result = await restore_file(store, journal_entry(item))
            if result == "conflict":
                outcome.conflicts.append(item.display)
            elif item.action == "delete":
                outcome.removed.append(item.display)
            else:
                outcome.restored.append(item.display)
    return outcome


async def rewind_with_files(
    store, session: Session, plan: list[FileRestore], outcome: RewindOutcome, to_head: str | None
) -> Session:
    """Restore the planned files and move the head, all or nothing across a kill -9: the
    journal is on disk before the first file is touched and removed after the head moved."""
    entries = [journal_entry(item) for item in plan if item.action in ("delete", "restore")]
    if not entries:
        await apply_restore(store, plan, outcome)
        return await store.set_head(session, to_head)
    journal = Journal(session_id=session.id, from_head=session.head_id, to_head=to_head, entries=entries)
    # In the loop's thread on purpose: a cancellation cannot lose the handle (and its lock)
    # half way; a few fsyncs of a small file.
    handle = write_journal(journal_dir(store), journal)
    try:
        await apply_restore(store, plan, outcome)
        await pause_for_tests()
        session = await store.set_head(session, to_head)
    except BaseException:
        handle.release()  # the journal stays: the next start finishes the restore
        raise
    handle.finish()
    return session
