"""Paging and tailing a file by descriptor, in bounded memory (seed 004 `read` / `tail`).

Both work on an already opened descriptor (see security.open_file) with `os.pread`, so a
200 MB file is never read whole: a page reads `limit` bytes and a few more, a tail reads
blocks backwards from the end until it has its lines or its byte budget. Offsets are UTF-8
byte offsets (SPEC §12.9) and no character is ever split: a start inside a character moves
back to its first byte, an end inside one moves back before it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

TAIL_BLOCK_BYTES = 64 * 1024
# A UTF-8 character is at most 4 bytes: at most 3 continuation bytes follow its first.
_MAX_CONTINUATION = 3


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


@dataclass
class Page:
    content: str
    start: int  # where the page really starts (moved back to a character boundary)
    next_offset: int
    done: bool
    size: int


def read_page(fd: int, offset: int, limit: int) -> Page:
    size = os.fstat(fd).st_size
    if offset >= size:
        return Page("", offset, size, True, size)
    base = max(0, offset - _MAX_CONTINUATION)
    chunk = os.pread(fd, (offset - base) + limit + _MAX_CONTINUATION + 1, base)
    start = offset - base
    while start > 0 and _continuation(chunk[start]):
        start -= 1
    end = min(start + limit, len(chunk))
    if base + end < size:  # not the end of the file: do not stop inside a character
        cut = end
        while cut > start and _continuation(chunk[cut]):
            cut -= 1
        if cut == start:  # the limit is smaller than this one character: give it whole
            cut = end
            while cut < len(chunk) and _continuation(chunk[cut]):
                cut += 1
        end = cut
    next_offset = base + end
    return Page(
        chunk[start:end].decode("utf-8", errors="replace"), base + start, next_offset, next_offset >= size, size
    )


@dataclass
class Tail:
    content: str
    lines: int  # lines in `content`
    start: int  # byte offset where `content` starts in the file
    capped: bool  # fewer lines than asked because of the byte budget (or a line was cut)


def tail_lines(fd: int, lines: int, max_bytes: int) -> Tail:
    """The last `lines` lines, at most `max_bytes` bytes of them.

    Reads backwards in blocks and stops as soon as it holds enough line starts or the byte
    budget, so memory is bounded by `max_bytes` plus one block whatever the file's size."""
    size = os.fstat(fd).st_size
    if size == 0 or lines <= 0:
        return Tail("", 0, size, False)
    end = size
    # A final newline ends the last line; it does not start an empty one.
    last = os.pread(fd, 1, size - 1)
    scan_end = size - 1 if last == b"\n" else size
    blocks: list[bytes] = []
    held = 0  # bytes in blocks
    pos = scan_end
    newlines = 0
    line_start: int | None = None
    while pos > 0 and held < max_bytes + 1:
        n = min(TAIL_BLOCK_BYTES, pos)
        pos -= n
        block = os.pread(fd, n, pos)
        blocks.append(block)
        held += n
        i = len(block)
        while newlines < lines:
            i = block.rfind(b"\n", 0, i)
            if i < 0:
                break
            newlines += 1
            if newlines == lines:
                line_start = pos + i + 1
        if line_start is not None:
            break
    if line_start is None and pos == 0 and held <= max_bytes:
        line_start = 0  # the whole file has fewer lines than asked
    data = b"".join(reversed(blocks)) + os.pread(fd, end - scan_end, scan_end)
    data_start = pos
    capped = False
    start = line_start if line_start is not None else data_start
    if end - start > max_bytes or line_start is None:
        # Over budget: keep whole lines from the end; if even the last line is too long, cut it.
        capped = True
        floor = end - max_bytes
        cut = data.find(b"\n", max(0, floor - data_start - 1))
        if cut >= 0 and data_start + cut + 1 < end and data_start + cut + 1 >= floor:
            start = data_start + cut + 1
        else:
            start = max(floor, data_start)
            while start < end and _continuation(data[start - data_start]):
                start += 1
    text = data[start - data_start :].decode("utf-8", errors="replace")
    count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return Tail(text, count, start, capped)
