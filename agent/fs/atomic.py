"""Writing a file whole or not at all: the one atomic-write helper of the code base.

A temporary sibling is written and fsynced with its final mode, then renamed over the
target inside the same folder (opened once, so the folder cannot be swapped between the
two steps, and a symlink at the name is replaced rather than written through). The file
tools (agent/tools/workspace.py, which also proves the folder is the approved one), the
trust record and the project config (agent/settings/) and the context files all write
this way. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from agent.fs.nofollow import CLOEXEC, DIRECTORY, NOFOLLOW

_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | DIRECTORY | CLOEXEC


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` via a temp file in the same folder + os.replace: all or nothing
    (`mode`: the file's permission bits; default: what the umask gives a new file)."""
    dir_fd = os.open(path.parent, _FOLDER_FLAGS)
    try:
        replace_in_folder(dir_fd, path.name, data, mode)
    finally:
        os.close(dir_fd)


def replace_in_folder(dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """The atomic write: temp file + rename, both inside the folder `dir_fd` (a symlink at
    `name` is replaced itself, never written through)."""
    tmp = write_temp(dir_fd, name, data, mode)
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        unlink_quietly(tmp, dir_fd)
        raise


def write_temp(dir_fd: int, name: str, data: bytes, mode: int | None) -> str:
    """A fully written and fsynced temporary sibling of `name`, with its final mode."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC
    for attempt in range(100):
        tmp = f".{name}.{os.urandom(6).hex()}.cairn-tmp"
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            if attempt == 99:
                raise
    try:
        try:
            write_all(fd, data, mode)
        finally:
            os.close(fd)
    except BaseException:
        unlink_quietly(tmp, dir_fd)
        raise
    return tmp


def write_all(fd: int, data: bytes, mode: int | None) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fchmod(fd, default_mode() if mode is None else mode)
    os.fsync(fd)


def default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def unlink_quietly(name: str, dir_fd: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)
