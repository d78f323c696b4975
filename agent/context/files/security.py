"""Keeping every context-file access inside its session's folder (seed 004, "安全边界").

Ids never become paths: the manager maps an id to a relative path it built itself (or read
from the session's manifest). Even so, every path is checked here and every file is opened
component by component relative to the session folder with O_NOFOLLOW, so neither a `..`
in a tampered manifest nor a symlink planted inside the folder can lead outside it, and
there is no window between "checked" and "opened" (the checks are the opens).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from agent.fs.atomic import replace_in_folder
from agent.fs.nofollow import CLOEXEC, DIRECTORY, NOFOLLOW, DescendError, descend

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


class ContextFileError(Exception):
    """A context-file request that cannot be served; the message is shown to the model."""


def shown(value: object, limit: int = 80) -> str:
    """An id as it may appear in an error message: quoted, printable, short."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id) or ".." in session_id:
        raise ContextFileError(f"invalid session id {shown(session_id)}")
    return session_id


def parts_of(rel: str) -> list[str]:
    """The components of a relative path we created: plain names only, no `..`, no absolutes."""
    if not isinstance(rel, str) or "\0" in rel or rel.startswith("/") or "\\" in rel:
        raise ContextFileError(f"refusing path {shown(rel)}: outside the session folder")
    parts = rel.split("/")
    if not parts or any(not _PART.match(p) or ".." in p for p in parts):
        raise ContextFileError(f"refusing path {shown(rel)}: outside the session folder")
    return parts


def _open_dir(base: Path, parts: list[str], *, create: bool) -> int:
    """A descriptor of `base/parts…`, each component opened without following symlinks."""
    try:
        fd = os.open(base, os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC)
    except FileNotFoundError:
        if not create:
            raise
        base.mkdir(parents=True, exist_ok=True)
        fd = os.open(base, os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC)
    except OSError as exc:
        raise ContextFileError("refusing the session folder: it is not a plain folder") from exc
    try:
        return descend(fd, parts, flags=os.O_RDONLY | DIRECTORY | CLOEXEC, create=create, mode=0o700)
    except DescendError as err:
        if isinstance(err.cause, FileNotFoundError):
            raise err.cause from None
        # ELOOP (a symlink) or ENOTDIR
        raise ContextFileError(f"refusing {err.part!r}: not a plain folder inside the session folder") from err.cause


def open_file(base: Path, rel: str) -> int:
    """A read-only descriptor of a regular file inside `base`; the caller closes it.

    Raises FileNotFoundError when it is simply missing (the manager rebuilds lazy files), and
    ContextFileError for anything that is not a plain file reached through plain folders."""
    parts = parts_of(rel)
    dir_fd = _open_dir(base, parts[:-1], create=False)
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | NOFOLLOW | CLOEXEC, dir_fd=dir_fd)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise ContextFileError(f"refusing {rel!r}: not a plain file inside the session folder") from exc
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ContextFileError(f"refusing {rel!r}: not a plain file inside the session folder")
    return fd


def write_atomic(base: Path, rel: str, data: bytes) -> None:
    """Write a file whole or not at all (agent/fs/atomic.py), in a folder reached without
    following a symlink: a reader never sees half a file, a crash leaves the old one, and
    rename replaces a planted symlink itself rather than writing through it."""
    parts = parts_of(rel)
    dir_fd = _open_dir(base, parts[:-1], create=True)
    try:
        replace_in_folder(dir_fd, parts[-1], data, 0o600)
    finally:
        os.close(dir_fd)


def remove_file(base: Path, rel: str) -> bool:
    """Delete a file inside `base` (never through a symlinked folder); False if it was absent."""
    parts = parts_of(rel)
    try:
        dir_fd = _open_dir(base, parts[:-1], create=False)
    except FileNotFoundError:
        return False
    try:
        os.unlink(parts[-1], dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(dir_fd)


# Redaction (SPEC §12.9, off by default): obvious credentials only. Each keeps its first four
# characters and the rest become `*`: same length, so sizes and byte offsets stay true.
SECRET_PATTERNS = re.compile(
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[baprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
)


def redact(text: str) -> str:
    return SECRET_PATTERNS.sub(lambda m: m.group(0)[:4] + "*" * (len(m.group(0)) - 4), text)
