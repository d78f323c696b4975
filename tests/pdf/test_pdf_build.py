"""A read's PDF in the build: a `file` part after its results for a model that takes PDFs, the
label only otherwise; a result a pass replaced (seed 000's placeholder) no longer carries or
counts its document; the estimate is per page, counted once."""

from __future__ import annotations

import json

from agent.context.builder import RequestBuilder
from agent.context.passes.file_reads import DEFAULT_PLACEHOLDER
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings
from tests.pdf.fixtures import text_pdf

SETTINGS = Settings(workspace="/ws")
PAGES = 2
PAGE_BOUND = 3_000


def _read(n: int) -> list[Message]:
    ref = {"hash": f"h{n}", "name": "doc.pdf", "mime": "application/pdf", "width": 0, "height": 0, "pages": PAGES}
    call = ToolCall(id=f"c{n}", name="filesystem-read", arguments=json.dumps({"filePath": "doc.pdf"}))
    return [
        Message(role="assistant", content="", tool_calls=[call], created_at=n * 10),
        Message(
            role="tool",
            tool_call_id=f"c{n}",
            tool_name="filesystem-read",
            content=f"📄 doc.pdf (PDF, pages 1-2 of 2)\n[document: doc.pdf, {PAGES} pages]",
            meta={"paths": ["doc.pdf"], "images": [ref]},
            created_at=n * 10 + 1,
        ),
    ]


def _builder(model: str, reads: int) -> RequestBuilder:
    builder = RequestBuilder(SETTINGS, model)
    for n in range(reads):
        builder.images.add(f"h{n}", text_pdf([f"version {n}", "end"]))
    return builder


def _history(reads: int) -> list[Message]:
    history = [Message(role="user", content="read doc.pdf again and again", created_at=0)]
    for n in range(reads):
        history += _read(n)
    return history + [Message(role="assistant", content="done", created_at=999)]


def _files(messages: list[dict]) -> list[dict]:
    return [p for m in messages if isinstance(m["content"], list) for p in m["content"] if p.get("type") == "file"]


def test_a_model_that_takes_pdfs_gets_the_document_as_a_file_part_after_the_result():
    build = _builder("claude-sonnet-4-5", 1).build(_history(1), now_ms=1_000, tools=None, system_prompt="sys")
    [part] = _files(build.messages)
    assert part["file"]["filename"] == "doc.pdf"
    assert part["file"]["file_data"].startswith("data:application/pdf;base64,")
    assert build.messages[3]["content"].endswith("[document: doc.pdf, 2 pages]")  # the result keeps its label


def test_a_model_that_sees_images_but_takes_no_pdfs_gets_the_label_only():
    builder = _builder("mistral/mistral-large-latest", 1)
    build = builder.build(_history(1), now_ms=1_000, tools=None, system_prompt="sys")
    assert _files(build.messages) == []


def test_reads_a_pass_replaced_neither_carry_nor_count_their_documents():
    """Each newer read covers the same pages, so the older ones become the placeholder (seed 000's
    text; issue 31's stale-results rule under the `auto` policy): their documents go with it."""
    reads = 6
    builder = _builder("claude-sonnet-4-5", reads)
    build = builder.build(_history(reads), now_ms=1_000, tools=None, system_prompt="sys")
    tool_texts = [m["content"] for m in build.messages if m["role"] == "tool"]
    assert tool_texts[:-1] == [DEFAULT_PLACEHOLDER] * (reads - 1)
    [part] = _files(build.messages)
    assert part["file"]["file_data"] == builder.images.data_url(f"h{reads - 1}", "application/pdf")  # the newest
    one = PAGES * PAGE_BOUND
    assert one <= build.tokens.messages < 2 * one  # counted once, the replaced ones not at all


def test_documents_pages_count_against_the_request_window():
    """Anthropic takes at most 100 pages a request: six reads of 20 pages each (small files) would
    be 120; the window sends the newest ones within it (a page weighs a hundredth of its bytes)."""
    history = [Message(role="user", content="read them all", created_at=0)]
    builder = RequestBuilder(SETTINGS, "claude-sonnet-4-5")
    for n in range(6):
        name = f"doc{n}.pdf"
        ref = {"hash": f"h{n}", "name": name, "mime": "application/pdf", "width": 0, "height": 0, "pages": 20}
        call = ToolCall(id=f"c{n}", name="filesystem-read", arguments=json.dumps({"filePath": name}))
        history += [
            Message(role="assistant", content="", tool_calls=[call], created_at=n * 10),
            Message(
                role="tool",
                tool_call_id=f"c{n}",
                tool_name="filesystem-read",
                content=f"📄 {name} (PDF, pages 1-20 of 20)\n[document: {name}, 20 pages]",
                meta={"images": [ref]},
                created_at=n * 10 + 1,
            ),
        ]
        builder.images.add(f"h{n}", text_pdf([f"file {n}"]))
    build = builder.build(history, now_ms=1_000, tools=None, system_prompt="sys")
    names = [p["file"]["filename"] for p in _files(build.messages)]
    assert 0 < len(names) * 20 <= 100
    assert names == [f"doc{n}.pdf" for n in range(6 - len(names), 6)]  # the newest
