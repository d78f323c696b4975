"""A rewind with file restore survives kill -9: it is journaled and rolled FORWARD.

"Conversation and files" touches several files and then moves the session head; a crash
in between would leave some files restored and others not, with the head still on the
old branch. So, before any file is touched, a journal is written next to the database
(`restore-journal-<session>-<nonce>.json`, complete and fsynced before it gets its final
name): every file's target hash (None: remove it), the hash the file had when the restore
was planned (the agent's last write), the head to move from and to. Then the files are
written back, the head moves, and the journal is deleted.

A journal left behind (the process died) is rolled FORWARD the next time a runtime opens
(`recover`, called by `Runtime.open` before the session is picked): the user asked for the
restore, and every step is idempotent. A file already at its target is done; one still
at the planned hash is restored from the blob table; one that is neither was changed by
someone else meanwhile and is left alone (reported, as a live restore reports conflicts).
The head moves only if it is still where the rewind left from (another process may have
continued the session since). A temp file of a write cut short is removed.

The owner holds an exclusive `flock` on its journal while it works (the kernel drops it
when the owner dies, however it dies). A process starting meanwhile waits for a live owner
(a rewind in another window, or another start-up recovering it) to finish, up to
LIVE_OWNER_WAIT seconds, rather than reading the session while its files are half restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

try:  # POSIX; elsewhere journals are still written and recovered, only not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

PREFIX = "restore-journal-"
SUFFIX = ".json"
TMP_SUFFIX = ".tmp"
# Test-only: seconds to sleep before each file of a restore, so a kill -9 harness can land
# between files (tests/session/test_kill9_harness.py). Unset in real use.
PAUSE_ENV = "CAIRN_TEST_RESTORE_PAUSE"
LIVE_OWNER_WAIT = 10.0
LOCK_POLL = 0.02

FileResult = Literal["restored", "removed", "done", "conflict"]


class JournalEntry(BaseModel):
    path: str  # absolute
    display: str
    target_hash: str | None  # what the file goes back to; None: remove it
    original_hash: str | None  # what it held when the restore was planned


class Journal(BaseModel):
    version: int = 1
    session_id: str
    from_head: str | None
    to_head: str | None
    entries: list[JournalEntry]


class Recovered(BaseModel):
    """A restore a dead process left half done, finished at start-up."""

    session_id: str
    restored: list[str] = []
    removed: list[str] = []
    conflicts: list[str] = []
    head_moved: bool = False

    def describe(self) -> str:
        """One line for the user: what start-up finished, and what it left alone."""
        done = len(self.restored) + len(self.removed)
        text = f"Finished a file restore an earlier cairn was killed in the middle of ({done} files"
        if self.conflicts:
            text += f"; left alone because they changed since: {', '.join(self.conflicts)}"
        return text + ")."


def journal_dir(store) -> Path:
    """Next to the database the store has open (agent.paths.data_dir() in real use)."""
    return Path(store.path).parent


# -- one file: the step both a live restore and a recovery run --------------------------------
def file_hash(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def temp_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.cairn-restore")


async def restore_file(store, entry: JournalEntry) -> FileResult:
    """Bring one file to its target, idempotently; never overwrite someone else's change."""
    target = Path(entry.path)
    current = file_hash(await asyncio.to_thread(_read, target))
    if current == entry.target_hash:
        result: FileResult = "done"
    elif current != entry.original_hash:
        result = "conflict"
    elif entry.target_hash is None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(target)
        result = "removed"
    else:
        data = await store.get_blob(entry.target_hash)
        if data is None:  # the checkpoint is gone (session deleted): never write garbage
            return "conflict"
        await asyncio.to_thread(write_back, target, data)
        result = "restored"
    return result


def write_back(target: Path, data: bytes) -> None:
    """Atomic and durable, keeping the file's permission bits when it still exists."""
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, target)


async def pause_for_tests() -> None:
    """Test-only hook (PAUSE_ENV); a no-op unless the variable is set."""
    seconds = os.environ.get(PAUSE_ENV)
    if seconds:
        await asyncio.sleep(float(seconds))


# -- the journal file ------------------------------------------------------------------------
def _lock(fd: int, *, wait: bool) -> bool:
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


@dataclass
class JournalHandle:
    """A written journal whose lock this process holds until `finish` or `release`."""

    path: Path
    fd: int
    journal: Journal
    closed: bool = field(default=False)

    def finish(self) -> None:
        """The restore is complete: remove the journal, then let go of the lock."""
        if not self.closed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self.release()

    def release(self) -> None:
        """Stop holding the lock but keep the journal (an error cut the restore short)."""
        if not self.closed:
            self.closed = True
            os.close(self.fd)


def write_journal(folder: Path, journal: Journal) -> JournalHandle:
    """Write, fsync and lock the journal under a temp name, then give it its final name:
    a journal under its final name is always complete and, while its owner lives, locked."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{PREFIX}{journal.session_id}-{uuid.uuid4().hex[:8]}{SUFFIX}"
    tmp = path.with_name(path.name + TMP_SUFFIX)
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _lock(fd, wait=True)
        os.write(fd, journal.model_dump_json().encode("utf-8"))
        os.fsync(fd)
        os.replace(tmp, path)
        _fsync_dir(folder)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return JournalHandle(path=path, fd=fd, journal=journal)


async def _claim(path: Path, wait: float) -> int | None:
    """Open and lock a journal, waiting up to `wait` s for a live owner; None if it is still
    held then, or gone (finished)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    deadline = asyncio.get_running_loop().time() + wait
    while not _lock(fd, wait=False):
        if asyncio.get_running_loop().time() >= deadline:
            os.close(fd)
            return None
        await asyncio.sleep(LOCK_POLL)
    try:
        same = os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        same = False
    if not same:  # the owner finished (and unlinked it) between our open and our lock
        os.close(fd)
        return None
    return fd


def _read_fd(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


# -- recovery --------------------------------------------------------------------------------
async def recover(store, wait: float = LIVE_OWNER_WAIT) -> list[Recovered]:
    """Roll forward every journal a dead process left next to the database."""
    folder = journal_dir(store)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    done: list[Recovered] = []
    for name in names:
        if not name.startswith(PREFIX):
            continue
        path = folder / name
        if name.endswith(SUFFIX + TMP_SUFFIX):
            await _drop_stale_temp(path)  # died while writing it: no file was touched yet
        elif name.endswith(SUFFIX):
            fd = await _claim(path, wait)
            if fd is None:
                continue
            handle = None
            try:
                try:
                    journal = Journal.model_validate_json(_read_fd(fd))
                except (ValidationError, json.JSONDecodeError, UnicodeDecodeError):
                    log.warning("unreadable restore journal %s removed", path)
                    handle = JournalHandle(path=path, fd=fd, journal=None)  # type: ignore[arg-type]
                    handle.finish()
                    continue
                handle = JournalHandle(path=path, fd=fd, journal=journal)
                done.append(await roll_forward(store, journal))
                handle.finish()
            except Exception:  # never keep cairn from starting; the journal stays for next time
                log.exception("could not finish the restore in %s", path)
            finally:
                if handle is None:
                    os.close(fd)
                else:
                    handle.release()
    return done


async def _drop_stale_temp(path: Path) -> None:
    fd = await _claim(path, 0)  # a live writer renames it in a moment: leave it
    if fd is not None:
        try:
            os.unlink(path)
        finally:
            os.close(fd)


async def roll_forward(store, journal: Journal) -> Recovered:
    """Finish a journaled restore: files first, then the head (only if nobody moved it)."""
    from agent.session.errors import StoreError

    out = Recovered(session_id=journal.session_id)
    for entry in journal.entries:
        tmp = temp_path(Path(entry.path))
        if tmp.exists():
            tmp.unlink()
        result = await restore_file(store, entry)
        if result == "restored":
            out.restored.append(entry.display)
        elif result == "removed":
            out.removed.append(entry.display)
        elif result == "conflict":
            out.conflicts.append(entry.display)
    session = await store.get_session(journal.session_id)
    if session is not None and session.head_id == journal.from_head and journal.from_head != journal.to_head:
        try:
            await store.set_head(session, journal.to_head)
            out.head_moved = True
        except StoreError:  # the target message is gone with its session: leave the head
            pass
    log.info("rolled forward a restore of session %s: %s", journal.session_id, out.model_dump())
    return out
