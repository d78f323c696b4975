"""Files cairn itself reads from the repository: one way in, for every such read.

A cloned repository is untrusted input. cairn reads some of its files on its own, not
through a tool the user approved: the project instructions (AGENTS.md, CLAUDE.md) and the
project commands (`.cairn/commands/*.md`) go to the provider, `.cairn/config.toml` and
`.mcp.json` decide what runs. Three tricks turn such a read against the user:

- a symlink: `.cairn/commands/review.md -> ../../.ssh/id_rsa` sends a private key to the
  provider the moment the user types `/review`;
- a FIFO: opening one blocks until a writer comes (a FIFO `.git/config` once hung cairn
  for ten minutes, deaf to SIGTERM; one in `.cairn/commands/` hangs `/help`);
- a huge file: memory, and a request no provider takes.

So every such read walks down from the workspace one name at a time without following a
symlink (agent/fs/nofollow.py), refuses what is not a regular file before and after opening
it (O_NONBLOCK: a FIFO swapped in between opens at once instead of blocking), and caps the
size. A caller that lets symlinks *inside* the workspace count (`CLAUDE.md -> AGENTS.md`)
says so (`follow_inside`): the link is resolved, a target outside is refused, and the
resolved path is walked the same way, so a swap after the check is refused too.

What was refused is a typed error with a readable `reason`, so each caller says in its own
words what it skipped (a notice, a warning), never a traceback.

Standard library only: agent/prompt.py and agent/settings/config.py read through this on the path
to the first screen.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from agent.fs.nofollow import CLOEXEC, DIRECTORY, NOFOLLOW, DescendError, descend

DEFAULT_MAX_BYTES = 1024 * 1024  # instructions, commands, configs are a few KiB; more is a mistake or hostile
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_READ_CHUNK = 64 * 1024


class RepoFileError(Exception):
    """A file cairn did not read. `path`: as the caller named it; `reason`: the rest of the
    sentence ("is a FIFO (named pipe), not a regular file"), so `f"{path} {reason}"` reads."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path, self.reason = path, reason


class FileMissing(RepoFileError):
    """No such file (or a dangling symlink, where symlinks inside may be followed)."""


class SymlinkRefused(RepoFileError):
    """The file, or a folder on the way to it, is a symlink: never followed."""


class OutsideWorkspace(RepoFileError):
    """The path leads out of the workspace (`..`, an absolute path elsewhere, or a symlink
    whose target is outside: `resolved`)."""

    def __init__(self, path: str, reason: str, resolved: Path | None = None) -> None:
        super().__init__(path, reason)
        self.resolved = resolved


class NotRegularFile(RepoFileError):
    """A FIFO, a device, a socket, or a folder where a file was wanted (or a file where a folder was)."""


class FileTooLarge(RepoFileError):
    """Bigger than the caller's cap."""

    def __init__(self, path: str, reason: str, size: int, limit: int) -> None:
        super().__init__(path, reason)
        self.size, self.limit = size, limit


class FileUnreadable(RepoFileError):
    """The operating system refused (permissions, an I/O error)."""


# -- reading ------------------------------------------------------------------------------------


def read_repo_file(
    workspace: Path | str,
    path: Path | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    truncate: bool = False,
    follow_inside: bool = False,
) -> bytes:
    """The bytes of the regular file `path` (relative to `workspace`, or absolute inside it).

    Raises a RepoFileError subclass for anything else. Larger than `max_bytes`: FileTooLarge,
    or with `truncate` its first `max_bytes` bytes. `follow_inside`: a symlink whose target
    stays inside the workspace is followed (see the module docstring); without it any
    symlink on the way is refused."""
    ws, parts, shown = _locate(workspace, path, follow_inside)
    if not parts:
        raise NotRegularFile(shown, "is the workspace folder, not a file")
    folder = _open_folder(ws, parts[:-1], shown)
    try:
        fd = _open_regular(parts[-1], folder, shown)
    finally:
        os.close(folder)
    return _read_fd(fd, shown, max_bytes, truncate)


def list_repo_folder(workspace: Path | str, path: Path | str, *, follow_inside: bool = False) -> list[str]:
    """The sorted entry names of the folder `path` in the workspace, reached without following
    a symlinked folder (with `follow_inside`, one resolving inside is followed). The entries
    themselves are not looked at: read each through `read_repo_file`."""
    ws, parts, shown = _locate(workspace, path, follow_inside)
    folder = _open_folder(ws, parts, shown, target=True)
    try:
        return sorted(os.listdir(folder))
    except OSError as exc:
        raise FileUnreadable(shown, f"cannot be listed: {exc.strerror or exc}") from None
    finally:
        os.close(folder)


def read_own_file(path: Path | str, *, max_bytes: int = DEFAULT_MAX_BYTES, truncate: bool = False) -> bytes:
    """A file of the user's own (their config, their commands): symlinks are followed (a
    dotfiles manager links them), but only a regular file is opened, without blocking,
    capped as `read_repo_file` caps."""
    shown = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileMissing(shown, "does not exist") from None
    except OSError as exc:
        raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
    _check_kind(st.st_mode, shown)
    try:
        fd = os.open(path, os.O_RDONLY | NONBLOCK | CLOEXEC)
    except FileNotFoundError:
        raise FileMissing(shown, "does not exist") from None
    except OSError as exc:
        raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
    return _read_fd(fd, shown, max_bytes, truncate)


# -- the walk -----------------------------------------------------------------------------------


def within(path: str, folder: str) -> bool:
    """Whether the (already normalised or resolved) `path` is `folder` or below it: by whole
    components, so `/ws-other` is not inside `/ws`. The sandbox and git_guard ask it too."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _locate(workspace: Path | str, path: Path | str, follow_inside: bool) -> tuple[str, list[str], str]:
    """(the resolved workspace, the names to walk down, the path as shown in errors)."""
    given = os.path.abspath(os.path.expanduser(os.fspath(workspace)))
    ws = os.path.realpath(given)
    raw = os.fspath(path)
    shown = raw
    norm = os.path.normpath(raw)
    if os.path.isabs(norm):
        base = next((b for b in (ws, given) if within(norm, b)), None)
        if base is None:
            raise OutsideWorkspace(shown, f"is outside the workspace {ws}")
        norm = norm[len(base) :].lstrip(os.sep) or "."
    parts = [p for p in norm.split(os.sep) if p not in ("", ".")]
    if ".." in parts:
        raise OutsideWorkspace(shown, f"leads outside the workspace {ws}")
    if follow_inside and parts:
        try:
            real = os.path.realpath(os.path.join(ws, *parts), strict=True)
        except FileNotFoundError:
            raise FileMissing(shown, "does not exist") from None
        except (OSError, RuntimeError) as exc:
            if isinstance(exc, OSError) and exc.errno not in (errno.ELOOP, None):
                raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
            raise SymlinkRefused(shown, "is a symlink loop") from None
        if not within(real, ws):
            raise OutsideWorkspace(shown, f"resolves to {real}, outside the workspace {ws}", Path(real))
        parts = [p for p in real[len(ws) :].split(os.sep) if p]
    return ws, parts, shown


def _open_folder(ws: str, parts: list[str], shown: str, *, target: bool = False) -> int:
    """The folder `parts` below `ws`, each name opened without following a symlink.
    `target`: that folder is what the caller asked for (else the way to a file in it)."""
    flags = os.O_RDONLY | DIRECTORY | CLOEXEC
    try:
        top = os.open(ws, flags)
    except FileNotFoundError:
        raise FileMissing(shown, f"does not exist (no workspace folder {ws})") from None
    except OSError as exc:
        raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
    try:
        return descend(top, parts, flags=flags)
    except DescendError as exc:
        where = os.sep.join(parts[: exc.index + 1])
        last = target and exc.index == len(parts) - 1  # the folder asked for, not one on the way
        if exc.is_link:
            raise SymlinkRefused(
                shown,
                "is a symlink, which cairn does not follow in a repository"
                if last
                else f"is reached through the symlink {where}, which cairn does not follow in a repository",
            ) from None
        if isinstance(exc.cause, FileNotFoundError):
            raise FileMissing(shown, "does not exist") from None
        if exc.cause.errno == errno.ENOTDIR:
            if last:
                raise NotRegularFile(shown, "is not a folder") from None
            raise FileMissing(shown, f"does not exist ({where} is not a folder)") from None
        raise FileUnreadable(shown, f"cannot be read: {exc.cause.strerror or exc.cause}") from None


def _open_regular(name: str, folder: int, shown: str) -> int:
    """`name` in `folder`, opened only if it is a regular file and not a symlink. Looked at
    before opening (opening a device can have effects) and again after (it may have been
    swapped in between: O_NONBLOCK keeps a FIFO from blocking the open)."""
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise FileMissing(shown, "does not exist") from None
    except OSError as exc:
        raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise SymlinkRefused(shown, "is a symlink, which cairn does not follow in a repository")
    _check_kind(st.st_mode, shown)
    try:
        return os.open(name, os.O_RDONLY | NONBLOCK | NOFOLLOW | CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        raise FileMissing(shown, "does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(shown, "is a symlink, which cairn does not follow in a repository") from None
        raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a plain file"


def _check_kind(mode: int, shown: str) -> None:
    kind = _kind(mode)
    if kind is not None:
        raise NotRegularFile(shown, f"is {kind}, not a regular file")


def _size_text(n: int) -> str:
    return (
        f"{n // (1024 * 1024)} MiB"
        if n >= 1024 * 1024 and n % (1024 * 1024) == 0
        else f"{n // 1024} KiB"
        if n >= 1024
        else f"{n} bytes"
    )


def _read_fd(fd: int, shown: str, max_bytes: int, truncate: bool) -> bytes:
    """Up to `max_bytes` of the open file `fd` (closed here), checked to be a regular file."""
    try:
        st = os.fstat(fd)
        _check_kind(st.st_mode, shown)
        if st.st_size > max_bytes and not truncate:
            raise FileTooLarge(
                shown, f"is larger than {_size_text(max_bytes)} ({st.st_size} bytes)", st.st_size, max_bytes
            )
        want = max_bytes if truncate else max_bytes + 1  # one more: a file that grew since fstat
        chunks: list[bytes] = []
        got = 0
        while got < want:
            chunk = os.read(fd, min(_READ_CHUNK, want - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise FileUnreadable(shown, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise FileTooLarge(shown, f"is larger than {_size_text(max_bytes)}", len(data), max_bytes)
    return data
