"""Workspace access for tools: where a path really points, and how to touch it safely.

Every tool path goes through `confine`: it is resolved against the workspace (`./`, `..`
and symlinks included), and anything that lands outside the workspace needs the user's
approval. The file helpers here never block on FIFOs/devices, never mistake binary data
for text, and write atomically so an interrupted write cannot leave half a file.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

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
    return ResolvedPath(path=real, display=display, inside=inside)


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


# -- reading --------------------------------------------------------------------------


def open_regular(rp: ResolvedPath) -> tuple[BinaryIO, os.stat_result]:
    """Open for reading without ever blocking: FIFOs, devices and sockets are refused."""
    try:
        fd = os.open(rp.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
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
            raise ToolError(
                f"{rp.display} is too large to {purpose} whole ({st.st_size} bytes, limit {max_bytes})"
            )
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


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file in the same folder + os.replace: all or nothing."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".cairn-tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _default_mode() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
