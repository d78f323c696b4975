"""The digest trust records: a config's content together with the files its commands run.

`pinned_digest` is what `trust.is_trusted` compares for a config whose hooks or MCP servers
execute files of the workspace (agent/settings/run_files.py): SHA-256 over the content's own
digest and, for each such file in order, its path relative to the workspace, where a symlink
on the way leads, and the SHA-256 of its bytes. Editing `.claude/hooks/format.sh` or
`tools/mcp_server.py` after the user trusted the config changes the digest, so the user is
asked again; a file that appears later (a module that now shadows an installed one) changes
it too. A config whose commands run no workspace file keeps the plain content digest, so
records written before files were pinned still match it.

Standard library only. Files are read as cairn reads a repository's: no blocking on a FIFO,
regular files only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

PINNED_VERSION = b"cairn pinned trust v1\n"
CHUNK_BYTES = 1024 * 1024
# A file this big (a repository can name a huge one in a hook's command) is pinned by its size
# and modification time instead of its bytes: every settings load computes the digest.
MAX_HASHED_BYTES = 16 * 1024 * 1024
UNREADABLE = "unreadable"  # the file's entry when it cannot be read now (it changes once it can)


def file_sha256(path: Path) -> str:
    """SHA-256 of a regular file's bytes (read in chunks; a FIFO put in its place does not
    block), its size and modification time when it is too big to read at every load, or
    UNREADABLE."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return UNREADABLE
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return UNREADABLE
        if info.st_size > MAX_HASHED_BYTES:
            return f"large:{info.st_size}:{info.st_mtime_ns}"
        digest = hashlib.sha256()
        while chunk := os.read(fd, CHUNK_BYTES):
            digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return UNREADABLE
    finally:
        os.close(fd)


def file_entry(path: Path, workspace: Path) -> str:
    """One file's line in the digest: where it is, where it leads, what it holds."""
    root = os.path.realpath(workspace)
    named = os.path.abspath(path)
    rel = os.path.relpath(named, root)
    real = os.path.realpath(named)
    target = "" if real == named else os.path.relpath(real, root) if real.startswith(root + os.sep) else real
    return f"{rel}\t{target}\t{file_sha256(Path(named))}"


def pinned_digest(content_sha256: str, files: Iterable[Path], workspace: Path) -> str:
    """The trust digest of a config (its content's digest) whose commands run `files`."""
    entries = sorted({file_entry(path, workspace) for path in files})
    if not entries:
        return content_sha256
    digest = hashlib.sha256(PINNED_VERSION + content_sha256.encode("ascii") + b"\n")
    for entry in entries:
        digest.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()
