"""`filesystem-read`: files as numbered lines, directories as listings (SPEC §3, §8).

The output format is a contract with the context passes (seed 000): each file is a block
starting `📄 path (lines a-b/total)` followed by `N→text` lines. Output is bounded: at most
`max_read_lines` lines per file, and a huge file is only ever streamed for a line range,
never loaded whole. A PDF is read by pages instead (agent/tools/pdf_read.py).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from pydantic import Field, field_validator

from agent.images import META_KEY as IMAGES_META
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, short_error, tool_prompt
from agent.tools.pdf_read import PdfRead, read_pdf
from agent.tools.workspace import (
    BINARY_SNIFF_BYTES,
    ResolvedPath,
    binary_error,
    confine,
    decode_text,
    looks_binary,
    open_directory,
    open_regular,
)

# When a file is over max_file_bytes and read by range, each streamed line keeps at most
# this many bytes, so max_read_lines lines stay bounded in memory.
STREAMED_LINE_KEEP_BYTES = 16 * 1024
STREAM_CHUNK_BYTES = 64 * 1024
# A read is sent whole, never previewed (SPEC §12.13), so the tool bounds it: a line longer
# than this is cut (minified code, data on one line; as Claude Code does), and a window stops
# early once its lines reach MAX_READ_CHARS (about 25,000 tokens), saying where to go on.
MAX_LINE_CHARS = 2_000
MAX_READ_CHARS = 100_000


class FileSpec(ToolArgs):
    path: str = Field(description="File or directory path, relative to the workspace.")
    startLine: int | None = Field(default=None, ge=1, description="First line to read (1-based).")
    endLine: int | None = Field(default=None, ge=1, description="Last line to read (1-based, inclusive).")


class ReadArgs(ToolArgs):
    filePath: str | list[str | FileSpec] = Field(
        description=(
            "Path of a file or directory relative to the workspace; or a list of paths; or a "
            "list of {path, startLine?, endLine?} objects to read several files at once."
        )
    )
    startLine: int | None = Field(
        default=None, ge=1, description="First line to read (1-based). Applies to entries without their own."
    )
    endLine: int | None = Field(
        default=None, ge=1, description="Last line to read (1-based, inclusive). Applies to entries without their own."
    )

    @field_validator("filePath", mode="before")
    @classmethod
    def _json_list_in_a_string(cls, value: Any) -> Any:
        """Models sometimes send a list as a JSON string: '["a.py", "b.py"]'."""
        if isinstance(value, str) and value.lstrip().startswith("["):
            try:
                parsed = json.loads(value)
            except ValueError:
                return value
            if isinstance(parsed, list):
                return parsed
        return value


def _split_lines(text: str) -> list[str]:
    """Lines as editors number them: split on \\n only, CR of CRLF dropped."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def check_range(display: str, start: int | None, end: int | None) -> None:
    if start is not None and end is not None and end < start:
        raise ToolError(f"endLine ({end}) is before startLine ({start}) for {display}")


def _more_note(last: int, total: int | str) -> str:
    return f"… showing up to line {last} of {total}. To read further, call filesystem-read with startLine={last + 1}."


def format_whole(rp: ResolvedPath, data: bytes, start: int | None, end: int | None, cap: int) -> str:
    lines = _split_lines(decode_text(rp, data))
    total = len(lines)
    if total == 0:
        return f"📄 {rp.display} (lines 0-0/0)\n(empty file)"
    first = start or 1
    if first > total:
        raise ToolError(f"startLine {first} is past the end of {rp.display} ({total} lines)")
    wanted_last = min(end or total, total)
    last = min(wanted_last, first + cap - 1)
    shown: list[str] = []
    used = 0
    cut = 0
    for n in range(first, last + 1):
        line = lines[n - 1]
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" … [{len(line) - MAX_LINE_CHARS:,} more characters on this line]"
            cut += 1
        if shown and used + len(line) > MAX_READ_CHARS:
            break
        shown.append(f"{n}→{line}")
        used += len(line) + 1
    last = first + len(shown) - 1
    out = f"📄 {rp.display} (lines {first}-{last}/{total})\n" + "\n".join(shown)
    if cut:
        out += f"\n({cut} line{'s' * (cut > 1)} cut at {MAX_LINE_CHARS:,} characters)"
    if last < wanted_last:
        out += "\n" + _more_note(last, total)
    return out


def _format_streamed(rp: ResolvedPath, f, size: int, start: int | None, end: int | None, cap: int) -> str:
    """A range of a file too big to load: scan line by line, keep only what is shown."""
    first = start or 1
    last_wanted = first + cap - 1 if end is None else min(end, first + cap - 1)
    shown: list[str] = []
    lineno, kept, dropped = 1, bytearray(), 0
    more = False
    while True:
        piece = f.readline(STREAM_CHUNK_BYTES)
        if not piece:
            if kept or dropped:  # last line without a newline
                shown.append(_streamed_line(lineno, kept, dropped))
            break
        if lineno > last_wanted:
            more = True
            break
        if b"\0" in piece:
            raise ToolError(f"{rp.display} has binary content at line {lineno} ({size} bytes); cannot show it")
        if lineno >= first:
            room = STREAMED_LINE_KEEP_BYTES - len(kept)
            kept += piece[: max(room, 0)]
            dropped += max(len(piece) - max(room, 0), 0)
        if piece.endswith(b"\n"):
            if lineno >= first:
                shown.append(_streamed_line(lineno, kept, dropped))
            lineno, kept, dropped = lineno + 1, bytearray(), 0
    if not shown:
        raise ToolError(f"startLine {first} is past the end of {rp.display} ({lineno - 1} lines)")
    last = first + len(shown) - 1
    out = f"📄 {rp.display} (lines {first}-{last}/?)\n" + "\n".join(shown)
    out += f"\n(total line count not computed: the file is {size} bytes)"
    if more and (end is None or last < end):
        out += "\n" + _more_note(last, "?")
    return out


def _streamed_line(n: int, kept: bytearray, dropped: int) -> str:
    text = bytes(kept).decode("utf-8", errors="replace").rstrip("\n")
    text = text[:-1] if text.endswith("\r") else text
    return f"{n}→{text}" + (f" … [{dropped} more bytes on this line]" if dropped else "")


def _read_file(rp: ResolvedPath, start: int | None, end: int | None, ctx: ToolContext) -> str:
    f, st = open_regular(rp)
    with f:
        if st.st_size <= ctx.max_file_bytes:
            return format_whole(rp, f.read(ctx.max_file_bytes + 1), start, end, ctx.max_read_lines)
        sample = f.read(BINARY_SNIFF_BYTES)
        if looks_binary(sample):
            raise binary_error(rp, st.st_size)
        if start is None and end is None:
            raise ToolError(
                f"{rp.display} is too large to read whole ({st.st_size} bytes, limit "
                f"{ctx.max_file_bytes}); read a part with startLine/endLine"
            )
        f.seek(0)
        return _format_streamed(rp, f, st.st_size, start, end, ctx.max_read_lines)


def _list_dir(rp: ResolvedPath, cap: int) -> str:
    try:
        fd = open_directory(rp)  # the folder that was checked, not what its path names now
        try:
            with os.scandir(fd) as it:
                entries = sorted(e.name + ("/" if _is_dir(e) else "") for e in it)
        finally:
            os.close(fd)
    except PermissionError:
        raise ToolError(f"Permission denied: {rp.display}") from None
    out = f"📁 {rp.display} ({len(entries)} entries)"
    if entries:
        out += "\n" + "\n".join(entries[:cap])
    if len(entries) > cap:
        out += f"\n… {len(entries) - cap} more entries not shown"
    return out


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _read_one(rp: ResolvedPath, start: int | None, end: int | None, ctx: ToolContext) -> str:
    check_range(rp.display, start, end)
    try:
        if rp.path.is_dir():
            return _list_dir(rp, ctx.max_read_lines)
        return _read_file(rp, start, end, ctx)
    except OSError as exc:
        raise ToolError(f"cannot read {rp.display}: {exc.strerror or exc}") from None


class FsRead(Tool):
    name = "filesystem-read"
    description = tool_prompt(name)
    Args = ReadArgs

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        specs = [args.filePath] if isinstance(args.filePath, str) else list(args.filePath)
        if not specs:
            raise ToolError("filePath is an empty list; give at least one path")
        blocks: list[str] = []
        paths: list[str] = []
        documents: list[PdfRead] = []
        failed = 0
        for spec in specs:
            raw, start, end = (spec, None, None) if isinstance(spec, str) else (spec.path, spec.startLine, spec.endLine)
            if start is None and end is None:
                start, end = args.startLine, args.endLine
            try:
                rp = await confine(raw, ctx, tool=self.name)
                check_range(rp.display, start, end)
                pdf = await read_pdf(rp, start, end, ctx)  # None: not a PDF
                blocks.append(await self.read_one(rp, start, end, ctx) if pdf is None else pdf.text)
                documents += [pdf] if pdf is not None and pdf.ref is not None else []
                paths.append(rp.display)
            except ToolError as exc:
                failed += 1
                blocks.append(f"Error: {short_error(str(exc))}")
        content = "\n\n".join(blocks)
        meta: dict[str, Any] = {"paths": paths}
        if documents:  # PDFs for a model that reads them: attached as a tool's images are
            meta[IMAGES_META] = [d.ref.model_dump() for d in documents if d.ref is not None]
        blobs = [d.data for d in documents if d.data is not None]
        return ToolResult(content=content, is_error=failed == len(specs), meta=meta, blobs=blobs)

    async def read_one(self, rp, start: int | None, end: int | None, ctx: ToolContext) -> str:
        """One path's block (a file's lines or a folder's entries); `cairn acp` reads through
        the editor instead (agent/acp/client_files.py)."""
        return await asyncio.to_thread(_read_one, rp, start, end, ctx)
