"""PDFs a read attaches: the document for a model that takes PDFs, its text for one that does not.

Claude, GPT-4o/4.1/5 and Gemini read a PDF themselves (text and a picture of each page), which
beats any text extraction on tables, figures and scans; litellm's bundled model map says which
do (`supports_pdf_input`). For the others pypdf extracts the text. Either way a read covers a
window of pages, like a long file's window of lines, so a 400-page manual never lands whole.

A PDF is untrusted input (a repository's, a download's), and a parser's loop or memory blow-up
on a crafted file is a known class of bug: so pypdf never runs in cairn's process. `python -I -m
agent.documents` (`main`) reads one window in a child process with its own CPU and memory
limits, which the tool kills after a wall-clock bound (agent/tools/pdf_read.py). Inside, the file
is capped in bytes, a read in pages, characters and extraction time (checked between pages;
pypdf bounds each stream's decompression itself); an encrypted or unreadable file is a
`PdfError` saying so; control characters are dropped from extracted text. pypdf's complaints
about a malformed file go nowhere.

A document travels as an image does (agent/images.py): its bytes in the store's blob table,
an `ImageRef` with `mime` `application/pdf` and `pages` in the tool message's meta, and a
request for a model that takes PDFs carries it (agent/context/rendered.py). pypdf is imported
only in that child.
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypdf import PdfReader

PDF_MIME = "application/pdf"
# Anthropic refuses requests over 32 MB; a bigger file is not read at all.
MAX_PDF_BYTES = 32 * 1024 * 1024
# A document sent whole or as a window stays under what one request may carry of attachments
# (agent/context/image_window.py: 20 MB raw, ~27 MB as base64); a bigger one is sent as text.
MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
# Pages one read covers (text or document): Anthropic bills 1,500-3,000 tokens a page as a
# document, so 20 pages stay near 60,000 tokens; the header says how to read on.
MAX_PAGES_PER_READ = 20
# Extraction stops (between pages) once it has taken this long; a crafted page can be slow.
EXTRACT_SECONDS = 20.0
# The header of a PDF is within its first 1,024 bytes (what readers accept).
PDF_SNIFF_BYTES = 1024
# The child reading a PDF: at most this much memory and CPU time (the kernel stops it), and
# the tool kills it after WORKER_SECONDS of wall-clock time.
WORKER_MEMORY_BYTES = 2 * 1024 * 1024 * 1024
WORKER_CPU_SECONDS = 60
WORKER_SECONDS = 60.0

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class PdfError(Exception):
    """A PDF that cannot be read; the message says why, for the model."""


@dataclass(frozen=True)
class PdfWindow:
    """The pages `first`..`last` of `total` one read shows: `text` (extracted) or `document`
    (the PDF bytes of those pages); `stopped` says why text ends before `last` was asked."""

    first: int
    last: int
    total: int
    text: str | None = None
    document: bytes | None = None
    stopped: str | None = None


def is_pdf(sample: bytes) -> bool:
    """A PDF by its first bytes (never by its name)."""
    return b"%PDF-" in sample[:PDF_SNIFF_BYTES]


def sees_pdfs(model: str) -> bool:
    """Whether `model` takes PDF documents: litellm's bundled model map says
    (`supports_pdf_input`); a model it does not know gets the text (a local server rarely
    takes a `file` part, and text works everywhere)."""
    from agent.llm.cost_map import model_info

    info = model_info(model) if model else None
    return bool(info is not None and info.supports_pdf_input)


def _quiet() -> None:
    """pypdf warns through `logging` and `warnings` about what it repairs; neither may reach the
    terminal. Idempotent: the handler is added once."""
    logger = logging.getLogger("pypdf")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
    warnings.filterwarnings("ignore", module=r"pypdf(\..*)?$")


def open_pdf(data: bytes) -> tuple[PdfReader, bool]:
    """The reader and whether the file was encrypted (opened with the empty password, which
    only restricts permissions); PdfError when it cannot be read at all."""
    _quiet()
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
        if encrypted and not reader.decrypt(""):
            raise PdfError("the PDF is encrypted (a password is needed to read it)")
        if not len(reader.pages):
            raise PdfError("the PDF has no pages")
    except PdfError:
        raise
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise PdfError(f"not a readable PDF ({type(exc).__name__}: {str(exc)[:200]})") from None
    except RecursionError:
        raise PdfError("not a readable PDF (its structure nests too deep)") from None
    return reader, encrypted


def page_range(total: int, start: int | None, end: int | None, cap: int = MAX_PAGES_PER_READ) -> tuple[int, int]:
    """The pages a read of `start`..`end` shows (1-based, inclusive), at most `cap` of them."""
    first = start or 1
    if first > total:
        raise PdfError(f"page {first} is past the end of the PDF ({total} pages)")
    last = min(end or total, total, first + cap - 1)
    return first, max(first, last)


def extract_text(
    reader: PdfReader, first: int, last: int, *, max_chars: int, seconds: float = EXTRACT_SECONDS
) -> PdfWindow:
    """The text of pages `first`..`last`, page by page, each under a `--- page N ---` line;
    stops early (saying why) at `max_chars` or after `seconds`."""
    total = len(reader.pages)
    deadline = time.monotonic() + seconds
    parts: list[str] = []
    used = 0
    done = first - 1
    stopped: str | None = None
    for number in range(first, last + 1):
        if parts and time.monotonic() > deadline:
            stopped = f"extraction took over {seconds:.0f} s"
            break
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except RecursionError:
            text = "(this page's text could not be extracted)"
        except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on a damaged page; the page says so
            text = f"(this page's text could not be extracted: {type(exc).__name__})"
        text = _CONTROL.sub("", text).strip() or "(no text on this page: a scan or a picture)"
        if parts and used + len(text) > max_chars:
            stopped = f"the text reached {max_chars:,} characters"
            break
        if len(text) > max_chars:
            text = text[:max_chars] + " … [page cut]"
        parts.append(f"--- page {number} ---\n{text}")
        used += len(text)
        done = number
    return PdfWindow(first=first, last=done, total=total, text="\n\n".join(parts), stopped=stopped)


def document_window(reader: PdfReader, data: bytes, first: int, last: int) -> bytes | None:
    """The PDF of pages `first`..`last`: the file's own bytes when that is all of it, else a
    new PDF of those pages; None when it would be over MAX_DOCUMENT_BYTES or cannot be written."""
    total = len(reader.pages)
    if first == 1 and last == total:
        return data if len(data) <= MAX_DOCUMENT_BYTES else None
    from pypdf import PdfWriter

    try:
        writer = PdfWriter()
        for number in range(first, last + 1):
            writer.add_page(reader.pages[number - 1])
        out = io.BytesIO()
        writer.write(out)
    except Exception:  # noqa: BLE001 - a damaged file pypdf cannot rewrite: its text is sent instead
        return None
    made = out.getvalue()
    return made if len(made) <= MAX_DOCUMENT_BYTES else None


def read_window(data: bytes, start: int | None, end: int | None, *, document: bool, max_chars: int) -> PdfWindow:
    """The window of pages `start`..`end` of the PDF `data`: its document (`document`, the file
    not encrypted and the window under MAX_DOCUMENT_BYTES), else its text. PdfError when unreadable."""
    reader, encrypted = open_pdf(data)
    total = len(reader.pages)
    first, last = page_range(total, start, end)
    if document and not encrypted:
        made = document_window(reader, data, first, last)
        if made is not None:
            return PdfWindow(first=first, last=last, total=total, document=made)
    return extract_text(reader, first, last, max_chars=max_chars)


def _limit_self() -> None:
    import contextlib
    import resource

    for limit, value in ((resource.RLIMIT_AS, WORKER_MEMORY_BYTES), (resource.RLIMIT_CPU, WORKER_CPU_SECONDS)):
        with contextlib.suppress(ValueError, OSError):  # a lower limit already set stays
            resource.setrlimit(limit, (value, value))


def main() -> int:
    """The child: argv[1] the request as JSON (`start`, `end`, `document`, `max_chars`), the PDF on
    stdin; writes one JSON line (the window, or `error`), then the document's bytes if any."""
    _limit_self()
    request = json.loads(sys.argv[1])
    data = sys.stdin.buffer.read(MAX_PDF_BYTES + 1)
    document = b""
    try:
        if len(data) > MAX_PDF_BYTES:
            raise PdfError("over the size limit for a PDF")
        window = read_window(
            data, request["start"], request["end"], document=request["document"], max_chars=request["max_chars"]
        )
        document = window.document or b""
        header = {
            "first": window.first,
            "last": window.last,
            "total": window.total,
            "text": window.text,
            "stopped": window.stopped,
            "document": len(document),
        }
    except PdfError as exc:
        header = {"error": str(exc)}
    except MemoryError:
        header = {"error": "reading it needs more memory than a PDF read may use"}
    sys.stdout.buffer.write(json.dumps(header).encode() + b"\n" + document)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
