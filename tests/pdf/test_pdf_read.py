"""filesystem-read on a PDF, at the tool: the document for a model that takes PDFs, the text
otherwise, windows of pages, and the refusals an untrusted file gets."""

from __future__ import annotations

import base64
import io

import pytest
from pypdf import PdfReader

from agent.documents import MAX_PAGES_PER_READ, extract_text, is_pdf, open_pdf, sees_pdfs
from agent.images import refs_of
from agent.tools.base import ToolContext, ToolError
from agent.tools.fs_read import FsRead
from agent.tools.pdf_read import read_pdf
from agent.tools.permissions import Permissions
from agent.tools.workspace import confine
from tests.pdf.fixtures import encrypted_pdf, text_pdf


def ctx_for(workspace, *, pdf: bool) -> ToolContext:
    return ToolContext(workspace=workspace, permissions=Permissions(None), pdf_input=lambda: pdf)


async def read(ctx, **args):
    return await FsRead().run(FsRead.Args.model_validate(args), ctx)


async def test_a_model_without_pdf_input_gets_the_text_of_each_page_under_a_header(workspace):
    (workspace / "doc.pdf").write_bytes(text_pdf(["Quarterly revenue rose", "Costs fell by ten percent"]))
    res = await read(ctx_for(workspace, pdf=False), filePath="doc.pdf")
    assert not res.is_error
    assert res.content == (
        "📄 doc.pdf (PDF, pages 1-2 of 2; its text)\n"
        "--- page 1 ---\nQuarterly revenue rose\n\n--- page 2 ---\nCosts fell by ten percent"
    )
    assert res.meta == {"paths": ["doc.pdf"]} and res.blobs == []


async def test_a_model_with_pdf_input_gets_the_document_attached_with_its_label(workspace):
    data = text_pdf(["one", "two", "three"])
    (workspace / "doc.pdf").write_bytes(data)
    res = await read(ctx_for(workspace, pdf=True), filePath="doc.pdf")
    assert res.content == "📄 doc.pdf (PDF, pages 1-3 of 3)\n[document: doc.pdf, 3 pages]"
    [ref] = refs_of(res.meta)
    assert (ref.mime, ref.pages, ref.name) == ("application/pdf", 3, "doc.pdf")
    assert res.blobs == [data]  # the file itself, lossless, when the read covers it whole
    assert ref.tokens == 3 * 3_000  # the per-page bound, not the bytes


async def test_a_long_pdf_is_windowed_and_says_how_to_read_on(workspace):
    pages = [f"Page number {n} text" for n in range(1, 26)]
    (workspace / "long.pdf").write_bytes(text_pdf(pages))
    ctx = ctx_for(workspace, pdf=False)
    first = await read(ctx, filePath="long.pdf")
    assert first.content.startswith(f"📄 long.pdf (PDF, pages 1-{MAX_PAGES_PER_READ} of 25; its text)\n")
    assert "Page number 20 text" in first.content and "Page number 21 text" not in first.content
    assert first.content.endswith(
        "… showing up to page 20 of 25. To read further, call filesystem-read with startLine=21"
        " (pages, for a PDF; at most 20 a read)."
    )
    rest = await read(ctx, filePath="long.pdf", startLine=21)
    assert rest.content.startswith("📄 long.pdf (PDF, pages 21-25 of 25; its text)\n--- page 21 ---")
    assert "showing up to" not in rest.content


async def test_a_window_of_a_long_pdf_is_sent_as_a_pdf_of_those_pages(workspace):
    (workspace / "long.pdf").write_bytes(text_pdf([f"Page {n}" for n in range(1, 26)]))
    res = await read(ctx_for(workspace, pdf=True), filePath="long.pdf", startLine=22, endLine=23)
    assert res.content == "📄 long.pdf (PDF, pages 22-23 of 25)\n[document: long.pdf, 2 pages]"
    window = PdfReader(io.BytesIO(res.blobs[0]))
    assert [p.extract_text() for p in window.pages] == ["Page 22", "Page 23"]


async def test_a_corrupt_pdf_is_a_clear_error(workspace):
    (workspace / "bad.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 50)
    res = await read(ctx_for(workspace, pdf=True), filePath="bad.pdf")
    assert res.is_error
    assert res.content.startswith("Error: bad.pdf: not a readable PDF (")


async def test_an_encrypted_pdf_is_a_clear_error(workspace):
    (workspace / "locked.pdf").write_bytes(encrypted_pdf(["secret plans"]))
    res = await read(ctx_for(workspace, pdf=False), filePath="locked.pdf")
    assert res.content == "Error: locked.pdf: the PDF is encrypted (a password is needed to read it)"


async def test_a_page_past_the_end_is_an_error(workspace):
    (workspace / "doc.pdf").write_bytes(text_pdf(["only"]))
    res = await read(ctx_for(workspace, pdf=False), filePath="doc.pdf", startLine=3)
    assert res.content == "Error: doc.pdf: page 3 is past the end of the PDF (1 pages)"


async def test_a_pdf_is_known_by_its_bytes_not_its_name(workspace):
    (workspace / "notes.pdf").write_text("plain text after all\n")
    (workspace / "report.bin").write_bytes(text_pdf(["hidden report"]))
    ctx = ctx_for(workspace, pdf=False)
    assert (await read(ctx, filePath="notes.pdf")).content == "📄 notes.pdf (lines 1-1/1)\n1→plain text after all"
    assert "hidden report" in (await read(ctx, filePath="report.bin")).content


def test_extracted_text_is_inert_and_bounded():
    reader, _ = open_pdf(text_pdf(["red \x1b[31m alert \x07 bell", "x" * 300, "never reached"]))
    window = extract_text(reader, 1, 3, max_chars=200)
    assert "\x1b" not in window.text and "\x07" not in window.text
    assert window.last == 1 and window.stopped == "the text reached 200 characters"  # page 2 waits its turn
    alone = extract_text(reader, 2, 3, max_chars=200)  # a page over the cap alone is cut
    assert alone.last == 2 and alone.text == "--- page 2 ---\n" + "x" * 200 + " … [page cut]"


def test_which_models_take_pdfs_comes_from_the_model_map():
    assert sees_pdfs("anthropic/claude-sonnet-4-5")
    assert sees_pdfs("gpt-4o")
    assert not sees_pdfs("openai/fake-model")  # unknown: the text works everywhere
    assert not sees_pdfs("openai/gpt-3.5-turbo")


@pytest.mark.parametrize("head", [b"%PDF-1.4\n", b"\n\n%PDF-2.0\n"])
def test_is_pdf(head):
    assert is_pdf(head + b"rest") and not is_pdf(base64.b64encode(head))


async def test_the_reader_is_a_child_killed_at_its_bound(workspace):
    (workspace / "doc.pdf").write_bytes(text_pdf(["slow enough"]))
    ctx = ctx_for(workspace, pdf=False)
    rp = await confine("doc.pdf", ctx, tool="filesystem-read")
    with pytest.raises(ToolError, match=r"^doc.pdf: reading the PDF took over 0 s; stopped$"):
        await read_pdf(rp, None, None, ctx, seconds=0)
    assert ctx.processes == set()  # killed and forgotten; an interrupt would have killed it too


async def test_the_child_imports_nothing_from_the_workspace_or_pythonpath(workspace, monkeypatch, tmp_path):
    """A repository's own `pypdf/` must not run: the child is isolated (`-I`) and starts in `/`."""
    marker = tmp_path / "ran"
    fake = workspace / "pypdf"
    fake.mkdir()
    (fake / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('pwned')\n")
    monkeypatch.setenv("PYTHONPATH", str(workspace))
    (workspace / "doc.pdf").write_bytes(text_pdf(["genuine text"]))
    res = await read(ctx_for(workspace, pdf=False), filePath="doc.pdf")
    assert "genuine text" in res.content
    assert not marker.exists()
