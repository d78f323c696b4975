"""`filesystem-read` on a PDF: the document itself for a model that takes PDFs, else its text.

A read names pages the way it names a text file's lines (`startLine`/`endLine` are pages for
a PDF: no new argument, so every request's schema stays as it was) and covers at most
`MAX_PAGES_PER_READ` of them. The block starts `📄 path (PDF, pages a-b of n)` and its last
line says how to read on. For a model that takes PDFs (agent/documents.py `sees_pdfs`, asked
through `ToolContext.pdf_input`) the block holds the document's label and the result attaches
the PDF of those pages (meta `images`, the bytes as blobs: the way a tool's images travel);
otherwise, and for an encrypted file or a window that cannot be written, the text pypdf
extracts. A PDF is found by its first bytes, not its name.

pypdf runs in a child (`python -I -m agent.documents`, see its docstring): isolated, so a
workspace's own `pypdf/` or `agent/` is never imported; in its own process group, registered in
`ctx.processes` so an interrupt kills it, without cairn's keys in its environment, and killed
after `WORKER_SECONDS`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from dataclasses import dataclass

from agent.documents import (
    MAX_PAGES_PER_READ,
    MAX_PDF_BYTES,
    PDF_MIME,
    PDF_SNIFF_BYTES,
    WORKER_SECONDS,
    PdfWindow,
    is_pdf,
)
from agent.images import ImageRef
from agent.process.process_group import kill_group
from agent.process.secrets import command_environment
from agent.tools.base import ToolContext, ToolError
from agent.tools.workspace import ResolvedPath, open_regular

# The text a read of a PDF shows at most (as a text file's window: about 25,000 tokens).
MAX_PDF_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class PdfRead:
    """One PDF's block for the result, and the document it attaches (None: its text is shown)."""

    text: str
    ref: ImageRef | None = None
    data: bytes | None = None


def pdf_bytes(rp: ResolvedPath) -> bytes | None:
    """The file's bytes when it is a PDF; None when it is not one (or not a regular file: the
    text read says what it is). Blocking: run it in a thread."""
    if rp.path.is_dir():
        return None
    try:
        f, st = open_regular(rp)
    except (ToolError, OSError):
        return None  # the text read reports it
    with f:
        if not is_pdf(f.read(PDF_SNIFF_BYTES)):
            return None
        if st.st_size > MAX_PDF_BYTES:
            raise ToolError(f"{rp.display} is a PDF of {_mb(st.st_size)}, over the {_mb(MAX_PDF_BYTES)} limit")
        f.seek(0)
        data = f.read(MAX_PDF_BYTES + 1)
    if len(data) > MAX_PDF_BYTES:
        raise ToolError(f"{rp.display} grew over the {_mb(MAX_PDF_BYTES)} limit for a PDF while it was read")
    return data


async def read_pdf(
    rp: ResolvedPath, start: int | None, end: int | None, ctx: ToolContext, *, seconds: float = WORKER_SECONDS
) -> PdfRead | None:
    """The read of `rp` when it is a PDF (see the module docstring); None when it is not one."""
    data = await asyncio.to_thread(pdf_bytes, rp)
    if data is None:
        return None
    document = ctx.pdf_input is not None and ctx.pdf_input()
    window = await _in_child(rp, data, start, end, document, ctx, seconds)
    total, first, last = window.total, window.first, window.last
    wanted = min(end or total, total)
    if window.document is not None:
        ref = ImageRef(
            hash=hashlib.sha256(window.document).hexdigest(),
            name=os.path.basename(rp.display) or "document.pdf",
            mime=PDF_MIME,
            width=0,
            height=0,
            pages=last - first + 1,
        )
        text = f"📄 {rp.display} (PDF, pages {first}-{last} of {total})\n{ref.label}"
        return PdfRead(text=_with_more(text, last, wanted, total), ref=ref, data=window.document)
    text = f"📄 {rp.display} (PDF, pages {first}-{last} of {total}; its text)\n{window.text}"
    if window.stopped:
        text += f"\n(stopped after page {last}: {window.stopped})"
    return PdfRead(text=_with_more(text, last, wanted, total))


async def _in_child(
    rp: ResolvedPath, data: bytes, start: int | None, end: int | None, document: bool, ctx: ToolContext, seconds: float
) -> PdfWindow:
    request = json.dumps({"start": start, "end": end, "document": document, "max_chars": MAX_PDF_TEXT_CHARS})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-m",
        "agent.documents",
        request,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd="/",
        env=command_environment(dict(os.environ)),
        start_new_session=True,
    )
    ctx.processes.add(proc)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(data), seconds)
    except TimeoutError:
        raise ToolError(f"{rp.display}: reading the PDF took over {seconds:.0f} s; stopped") from None
    finally:
        kill_group(proc.pid)  # done or not: nothing of it outlives the read
        ctx.processes.discard(proc)
    head, _, rest = out.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        raise ToolError(f"{rp.display}: the PDF reader stopped (exit {proc.returncode}); not read") from None
    if "error" in header:
        raise ToolError(f"{rp.display}: {header['error']}")
    size = header.get("document") or 0
    if len(rest) != size:
        raise ToolError(f"{rp.display}: the PDF reader's answer was cut; not read")
    return PdfWindow(
        first=header["first"],
        last=header["last"],
        total=header["total"],
        text=header.get("text"),
        document=rest or None,
        stopped=header.get("stopped"),
    )


def _with_more(text: str, last: int, wanted: int, total: int) -> str:
    if last >= wanted:
        return text
    return (
        f"{text}\n… showing up to page {last} of {total}. To read further, call filesystem-read "
        f"with startLine={last + 1} (pages, for a PDF; at most {MAX_PAGES_PER_READ} a read)."
    )


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
