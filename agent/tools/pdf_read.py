"""`filesystem-read` on a PDF: the document itself for a model that takes PDFs, else its text.

A read names pages the way it names a text file's lines (`startLine`/`endLine` are pages for
a PDF: no new argument, so every request's schema stays as it was) and covers at most
`MAX_PAGES_PER_READ` of them. The block starts `📄 path (PDF, pages a-b of n)` and its last
line says how to read on. For a model that takes PDFs (agent/documents.py `sees_pdfs`, asked
through `ToolContext.pdf_input`) the block holds the document's label and the result attaches
the PDF of those pages (meta `images`, the bytes as blobs: the way a tool's images travel);
otherwise, and for an encrypted file or a window that cannot be written, the text pypdf
extracts. A PDF is found by its first bytes, not its name.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from agent.documents import (
    MAX_PAGES_PER_READ,
    MAX_PDF_BYTES,
    PDF_MIME,
    PDF_SNIFF_BYTES,
    PdfError,
    document_window,
    extract_text,
    is_pdf,
    open_pdf,
    page_range,
)
from agent.images import ImageRef
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


def read_pdf(rp: ResolvedPath, start: int | None, end: int | None, ctx: ToolContext) -> PdfRead | None:
    """The read of `rp` when it is a PDF; None when it is not one (or not a regular file: the
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
    try:
        return _read(rp, data, start, end, ctx)
    except PdfError as exc:
        raise ToolError(f"{rp.display}: {exc}") from None


def _read(rp: ResolvedPath, data: bytes, start: int | None, end: int | None, ctx: ToolContext) -> PdfRead:
    reader, encrypted = open_pdf(data)
    total = len(reader.pages)
    first, last = page_range(total, start, end, MAX_PAGES_PER_READ)
    wanted = min(end or total, total)
    if ctx.pdf_input is not None and not encrypted and ctx.pdf_input():
        document = document_window(reader, data, first, last)
        if document is not None:
            pages = last - first + 1
            ref = ImageRef(
                hash=hashlib.sha256(document).hexdigest(),
                name=os.path.basename(rp.display) or "document.pdf",
                mime=PDF_MIME,
                width=0,
                height=0,
                pages=pages,
            )
            text = f"📄 {rp.display} (PDF, pages {first}-{last} of {total})\n{ref.label}"
            return PdfRead(text=_with_more(text, last, wanted, total), ref=ref, data=document)
    window = extract_text(reader, first, last, max_chars=MAX_PDF_TEXT_CHARS)
    text = f"📄 {rp.display} (PDF, pages {window.first}-{window.last} of {total}; its text)\n{window.text}"
    if window.stopped:
        text += f"\n(stopped after page {window.last}: {window.stopped})"
    return PdfRead(text=_with_more(text, window.last, wanted, total))


def _with_more(text: str, last: int, wanted: int, total: int) -> str:
    if last >= wanted:
        return text
    return (
        f"{text}\n… showing up to page {last} of {total}. To read further, call filesystem-read "
        f"with startLine={last + 1} (pages, for a PDF; at most {MAX_PAGES_PER_READ} a read)."
    )


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
