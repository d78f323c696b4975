"""Workspace access for tools: where a path really points, and how to touch it safely.

Every tool path goes through `confine`: it is resolved against the workspace (`./`, `..`
and symlinks included), and anything that lands outside the workspace needs the user's
approval. The file helpers here never block on FIFOs/devices, never mistake binary data
for text, and write atomically so an interrupted write cannot leave half a file.

Checked and approved is not the same moment as opened: a folder swapped for a symlink while
the user decides would redirect a write made by path name. So files are opened the way they
were approved: from a descriptor of the workspace (of `/` for an approved outside path), one
component of the *resolved* path at a time with O_NOFOLLOW. The resolved path holds no
symlink by construction (symlinks that existed when it was checked are already followed, so
`alias.txt -> real.txt` keeps working), hence any symlink met on the way is a change since
the check: refused with an error saying so, and nothing is read or written.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agent.fs.atomic import atomic_write, replace_in_folder, unlink_quietly, write_all, write_temp  # noqa: F401 - atomic_write: the tools' name for it
from agent.fs.nofollow import CLOEXEC, DIRECTORY, NOFOLLOW, DescendError, descend, is_link
from agent.tools.base import ToolContext, ToolError
from agent.tools.permissions import ApprovalRequest

# A file whose first bytes hold a NUL or invalid UTF-8 is binary (same rule as git/grep).
BINARY_SNIFF_BYTES = 8192

BINARY_HINT = "only text files can be read or edited; inspect it with terminal-execute (file, xxd, strings)"


@dataclass(frozen=True)
class ResolvedPath:
    path: Path  # absolute, symlinks resolved: what is actually read or written
    display: str  # what the model and the user see: relative to the workspace when inside
    inside: bool
    root: Path | None = None  # the (resolved) workspace it was checked against


def workspace_root(ctx_or_path: ToolContext | Path) -> Path:
    ws = ctx_or_path.workspace if isinstance(ctx_or_path, ToolContext) else ctx_or_path
    return Path(ws).expanduser().resolve()


def display_path(path: Path, workspace: Path) -> str:
    """Relative (posix, no `./`) when under the workspace, else the absolute path."""
    for base in (Path(workspace), Path(workspace).resolve()):
        try:
            rel = Path(path).relative_to(base)
        except ValueError:
            continue
        text = rel.as_posix()
        return text if text not in ("", ".") else "."
    return str(path)


# `\xNN` (NN >= 80) in a path: a byte of a file name that is not UTF-8, as tool results
# show it (agent.tools.base.storable); it is turned back into that byte when the path
# does not exist as written.
_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


# PATH_MAX on Linux: longer paths fail with ENAMETOOLONG anyway.
MAX_PATH_BYTES = 4096


def _unescape_bytes(raw: str) -> str:
    return _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), raw)


def resolve_path(raw: str, workspace: Path) -> ResolvedPath:
    """Pure resolution, no approval. Raises ToolError for an empty or unusable path."""
    if raw is None or not str(raw).strip():
        raise ToolError("the path is empty; give a file path relative to the workspace")
    if "\0" in raw:
        raise ToolError("the path contains a NUL character")
    try:
        size = len(os.fsencode(raw))
    except UnicodeEncodeError:  # a lone surrogate outside surrogateescape's byte range
        raise ToolError("the path contains characters that are not valid Unicode (lone surrogates)") from None
    if size > MAX_PATH_BYTES:
        # No system call accepts it, and resolving (and `in parents`) is quadratic in the
        # number of parts: a 400 KB `d/d/d/…` froze the event loop for minutes.
        raise ToolError(f"the path is too long ({size} bytes; the limit is {MAX_PATH_BYTES})")
    ws = workspace_root(workspace)
    if _BYTE_ESCAPE.search(raw) and not os.path.lexists(ws / os.path.expanduser(raw.strip())):
        raw = _unescape_bytes(raw)
    given = Path(os.path.expanduser(str(raw).strip()))
    lexical = Path(os.path.normpath(ws / given))  # `..` and `./` folded without touching disk
    try:
        real = lexical.resolve()  # follows symlinks of every existing component
    except (RuntimeError, OSError) as exc:  # symlink loop (RuntimeError on 3.11)
        raise ToolError(f"cannot resolve {raw}: {exc}") from None
    inside = real == ws or ws in real.parents
    if inside:
        shown = lexical if (lexical == ws or ws in lexical.parents) else real
        display = display_path(shown, ws)
    else:
        display = str(real)
    return ResolvedPath(path=real, display=display, inside=inside, root=ws)


async def confine(raw: str, ctx: ToolContext, *, tool: str) -> ResolvedPath:
    """Resolve `raw`; a path outside the workspace must be approved by the user."""
    rp = resolve_path(raw, ctx.workspace)
    if rp.inside:
        return rp
    ws = workspace_root(ctx)
    request = ApprovalRequest(
        tool=tool,
        kind="outside",
        key=f"outside:{rp.path}",
        title=f"Access {rp.path} (outside the workspace)",
        detail=f"{tool} wants to use {rp.path}, which is outside the workspace {ws}",
    )
    if not await ctx.permissions.check(request):
        raise ToolError(f"Path {raw} is outside the workspace {ws} (resolves to {rp.path}; not approved)")
    return rp


# -- opening what was checked (see the module docstring) -------------------------------

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | CLOEXEC
# Folders on the way are only walked through: O_PATH (Linux) needs search permission only,
# like a lookup by path name; elsewhere O_RDONLY.
_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | DIRECTORY | CLOEXEC


class PathChanged(ToolError):
    """A component of a checked (or approved) path is now a symlink: it no longer names
    the file that was checked, and may lead outside the workspace."""


def _anchor(rp: ResolvedPath) -> tuple[Path, tuple[str, ...]]:
    """Where the walk starts and the names below it: the workspace for a path inside it,
    `/` for an approved path outside it."""
    if rp.inside and rp.root is not None:
        return rp.root, rp.path.relative_to(rp.root).parts
    return Path(rp.path.anchor), rp.path.parts[1:]


def _changed(rp: ResolvedPath, link: Path, *, writing: bool) -> PathChanged:
    try:
        target = link.resolve()
    except (OSError, RuntimeError):
        target = None
    root = rp.root
    outside = rp.inside and (target is None or root is None or (target != root and root not in target.parents))
    leads = f" to {target}" if target is not None else ""
    if outside:
        leads += ", outside the workspace"
    shown = display_path(link, root) if root is not None else str(link)
    when, what = ("approved", "written") if writing else ("checked", "read")
    return PathChanged(
        f"the path {rp.display} changed after it was {when}: {shown} is now a symbolic link{leads}; "
        f"nothing was {what}. Check the path and try again."
    )


def _walk(rp: ResolvedPath, *, create: bool = False, writing: bool = False) -> tuple[int, str]:
    """A descriptor of the folder holding `rp.path`, and the final name: reached from the
    anchor one component at a time, never following a symlink. `create`: make missing
    folders on the way (each is opened the same way after it is made)."""
    base, parts = _anchor(rp)
    if not parts:
        raise ToolError(f"{rp.display} is a directory")
    try:
        fd = descend(os.open(base, _WALK_FLAGS), parts[:-1], flags=_WALK_FLAGS, create=create)
    except DescendError as err:
        if err.is_link:
            raise _changed(rp, base.joinpath(*parts[: err.index + 1]), writing=writing) from None
        raise err.cause from None
    return fd, parts[-1]


def _open_checked(rp: ResolvedPath, flags: int) -> int:
    """`rp.path` opened for reading with `flags`; inside the workspace, through `_walk` and
    O_NOFOLLOW. An approved path outside is opened by name, as it was before (reads of it
    were approved by the user; writes go through `write_file` either way)."""
    if not (rp.inside and rp.root is not None):
        return os.open(rp.path, flags)
    if rp.path == rp.root:
        return os.open(rp.root, flags)
    dir_fd, name = _walk(rp)
    try:
        return os.open(name, flags | NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        if is_link(name, dir_fd):
            raise _changed(rp, rp.path, writing=False) from None
        raise
    finally:
        os.close(dir_fd)


def open_directory(rp: ResolvedPath) -> int:
    """A descriptor of the folder `rp` names, opened like `open_regular` opens files (for
    `os.scandir`); the caller closes it."""
    return _open_checked(rp, os.O_RDONLY | DIRECTORY | CLOEXEC)


# -- reading --------------------------------------------------------------------------


def open_regular(rp: ResolvedPath) -> tuple[BinaryIO, os.stat_result]:
    """Open for reading without ever blocking: FIFOs, devices and sockets are refused."""
    try:
        fd = _open_checked(rp, _READ_FLAGS)
    except FileNotFoundError:
        raise ToolError(f"File not found: {rp.display}{_similar_names_hint(rp.path)}") from None
    except IsADirectoryError:
        raise ToolError(f"{rp.display} is a directory") from None
    except PermissionError:
        raise ToolError(f"Permission denied: {rp.display}") from None
    except OSError as exc:
        raise ToolError(f"cannot open {rp.display}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise ToolError(f"{rp.display} is a directory")
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ToolError(f"{rp.display} is not a regular file (device, FIFO or socket); it cannot be read")
    return os.fdopen(fd, "rb"), st


def looks_binary(sample: bytes) -> bool:
    """NUL byte, or bytes that are not UTF-8 (a character cut at the end is fine)."""
    if b"\0" in sample:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return True
    return False


def binary_error(rp: ResolvedPath, size: int) -> ToolError:
    return ToolError(f"{rp.display} is a binary file ({size} bytes); {BINARY_HINT}")


@dataclass
class TextFile:
    text: str
    data: bytes
    mode: int  # permission bits, kept when the file is rewritten


def read_text(rp: ResolvedPath, max_bytes: int, *, purpose: str = "read") -> TextFile:
    """The whole file as text; refuses binary files and files over `max_bytes`."""
    f, st = open_regular(rp)
    with f:
        if st.st_size > max_bytes:
            raise ToolError(f"{rp.display} is too large to {purpose} whole ({st.st_size} bytes, limit {max_bytes})")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while we looked
        raise ToolError(f"{rp.display} is too large to {purpose} whole (over {max_bytes} bytes)")
    return TextFile(text=decode_text(rp, data), data=data, mode=stat.S_IMODE(st.st_mode))


def decode_text(rp: ResolvedPath, data: bytes) -> str:
    """UTF-8 text, or the binary-file error (a NUL early on, or bytes that are not UTF-8)."""
    if looks_binary(data[:BINARY_SNIFF_BYTES]):
        raise binary_error(rp, len(data))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise binary_error(rp, len(data)) from None


def _similar_names_hint(path: Path) -> str:
    import difflib

    try:
        names = os.listdir(path.parent)
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


# -- writing --------------------------------------------------------------------------


def write_file(rp: ResolvedPath, data: bytes, *, before: bytes | None, mode: int | None) -> None:
    """Write `data` to the file `rp` named when the user approved it, or raise ToolError.

    `before` is what the approval was about: None, the file did not exist (missing folders
    are made; it is created without replacing anything that appeared meanwhile); bytes, the
    file must still hold exactly them. The folder is reached with `_walk`, so a component
    swapped for a symlink after approval is refused (PathChanged) and nothing is written.
    """
    try:
        dir_fd, name = _walk(rp, create=before is None, writing=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"cannot create {rp.display}: a parent path is a file, not a folder") from None
    except FileNotFoundError:
        raise ToolError(
            f"a folder of {rp.display} was removed while waiting for approval; nothing was written"
        ) from None
    except OSError as exc:
        raise ToolError(f"cannot write {rp.display}: {exc.strerror or exc}") from None
    try:
        if before is None:
            _create_new(rp, dir_fd, name, data, mode)
        else:
            _check_unchanged(rp, dir_fd, name, before)
            replace_in_folder(dir_fd, name, data, mode)
    except OSError as exc:
        raise ToolError(f"cannot write {rp.display}: {exc.strerror or exc}") from None
    finally:
        os.close(dir_fd)


def _check_unchanged(rp: ResolvedPath, dir_fd: int, name: str, expected: bytes) -> None:
    """The approval may take a while: never overwrite changes made meanwhile."""
    try:
        fd = os.open(name, _READ_FLAGS | NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        raise ToolError(f"{rp.display} was removed while waiting for approval; nothing was written") from None
    except OSError as exc:
        if is_link(name, dir_fd):
            raise _changed(rp, rp.path, writing=True) from None
        raise ToolError(f"cannot re-read {rp.display}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError(f"{rp.display} is no longer a regular file; nothing was written")
        chunks, left = [], len(expected) + 1
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if b"".join(chunks) != expected:
        raise ToolError(f"{rp.display} changed on disk while waiting for approval; read it again and retry")


# A file system without hard links answers link() with one of these.
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS}


def _create_new(rp: ResolvedPath, dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Atomic and never replacing: the temp file is hard-linked to `name` (fails if anything,
    a symlink included, appeared there). Without hard links: O_CREAT | O_EXCL | O_NOFOLLOW
    on `name` itself, removed again if the write fails."""
    tmp = write_temp(dir_fd, name, data, mode)
    try:
        os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except FileExistsError:
        raise _appeared(rp, dir_fd, name) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        _create_in_place(rp, dir_fd, name, data, mode)
    finally:
        unlink_quietly(tmp, dir_fd)


def _create_in_place(rp: ResolvedPath, dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC
    try:
        fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    except FileExistsError:
        raise _appeared(rp, dir_fd, name) from None
    try:
        try:
            write_all(fd, data, mode)
        finally:
            os.close(fd)
    except BaseException:
        unlink_quietly(name, dir_fd)
        raise


def _appeared(rp: ResolvedPath, dir_fd: int, name: str) -> ToolError:
    if is_link(name, dir_fd):
        return _changed(rp, rp.path, writing=True)
    return ToolError(
        f"{rp.display} appeared while waiting for approval; nothing was written. Read it, then "
        "edit it or create it again with overwrite=true."
    )
