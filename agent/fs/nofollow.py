"""Walking down folders one name at a time without following a symlink.

A path checked and then opened by name can be swapped for a symlink in between (a race an
untrusted repository or a process of the model's can win). Opening each component relative
to the one above with O_NOFOLLOW closes it. The workspace's file tools
(agent/tools/workspace.py), the session's context files (agent/context/files/security.py)
and the repository files cairn reads on its own (agent/fs/repo_files.py) all walk this way;
each says in its own words what a refused component means.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class DescendError(Exception):
    """Component `index` (`part`) could not be opened as a folder: `cause` is the OS error,
    `is_link` whether it is a symlink (else missing, or not a folder)."""

    def __init__(self, index: int, part: str, cause: OSError, is_link: bool) -> None:
        super().__init__(str(cause))
        self.index, self.part, self.cause, self.is_link = index, part, cause, is_link


def is_link(name: str, dir_fd: int) -> bool:
    """Whether `name` in the folder `dir_fd` is a symlink (never followed)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def descend(fd: int, parts: Sequence[str], *, flags: int, create: bool = False, mode: int = 0o777) -> int:
    """The folder `parts` below the folder `fd`, each opened with `flags | O_NOFOLLOW`
    relative to the one above; `create`: make a missing one (with `mode`) first. `fd` is taken
    over: closed on the way down, and on any failure (DescendError, or what interrupts)."""
    try:
        for index, part in enumerate(parts):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, mode, dir_fd=fd)
            try:
                child = os.open(part, flags | NOFOLLOW, dir_fd=fd)
            except OSError as exc:  # ENOENT; ENOTDIR or ELOOP for a symlink; ENOTDIR for a file
                raise DescendError(index, part, exc, is_link(part, fd)) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd
