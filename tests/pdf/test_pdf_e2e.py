"""A PDF reaches the model through a real Runtime against the loopback fake servers: an Anthropic
document block (fast path and litellm), an OpenAI `file` part for a model that takes PDFs, the
extracted text with its page header for one that does not; by the model's read and by `@doc.pdf`."""

from __future__ import annotations

import base64

import pytest

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes import anthropic_server as anthropic
from tests.fakes.llm_server import text, tool_calls
from tests.pdf.fixtures import text_pdf

PAGES = ["Invoice 4711 total 99 EUR", "Payment due in thirty days"]
READ = ("call_1", "filesystem-read", {"filePath": "doc.pdf"})


async def _anthropic_run(server, workspace, prompt: str, *, client: str) -> None:
    settings = load_settings(
        workspace,
        flags={
            "model": "anthropic/claude-sonnet-4-5",
            "api_base": server.base_url,
            "api_key": "sk-ant-test",
            "yolo": True,
            "llm": {"client": client},
        },
    )
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda event: None))
    try:
        await runtime.submit(Prompt(prompt))
    finally:
        await runtime.close()


def _documents(body: dict) -> list[dict]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "document"
    ]


@pytest.mark.parametrize("client", ["auto", "litellm"])
async def test_a_read_of_a_pdf_puts_a_document_block_in_the_next_anthropic_request(anthropic_server, workspace, client):
    data = text_pdf(PAGES)
    (workspace / "doc.pdf").write_bytes(data)
    anthropic_server.add(anthropic.tool_use([READ]), anthropic.text("It is an invoice."))
    await _anthropic_run(anthropic_server, workspace, "what is doc.pdf?", client=client)
    assert anthropic_server.rejections == []
    first, second = anthropic_server.requests
    assert _documents(first) == []
    [document] = _documents(second)
    assert document["source"]["type"] == "base64" and document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]) == data
    blocks = [b for m in second["messages"] for b in m["content"] if isinstance(b, dict)]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    result_text = str(results[0]["content"])
    assert "📄 doc.pdf (PDF, pages 1-2 of 2)" in result_text and "Invoice 4711" not in result_text


async def test_at_doc_pdf_attaches_the_document_for_anthropic(anthropic_server, workspace):
    data = text_pdf(PAGES)
    (workspace / "doc.pdf").write_bytes(data)
    anthropic_server.add(anthropic.text("An invoice."))
    await _anthropic_run(anthropic_server, workspace, "summarise @doc.pdf", client="auto")
    assert anthropic_server.rejections == []
    [document] = _documents(anthropic_server.requests[0])
    assert base64.b64decode(document["source"]["data"]) == data


async def test_a_model_without_pdf_input_gets_the_text_with_the_page_header(server, open_runtime):
    (open_runtime.workspace / "doc.pdf").write_bytes(text_pdf(PAGES))
    server.add(tool_calls([READ]), text("An invoice."))
    runtime = await open_runtime()  # openai/fake-model: not in the model map, so no PDF input
    try:
        await runtime.submit(Prompt("what is doc.pdf?"))
    finally:
        await runtime.close()
    tool = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert tool["content"] == (
        "📄 doc.pdf (PDF, pages 1-2 of 2; its text)\n"
        "--- page 1 ---\nInvoice 4711 total 99 EUR\n\n--- page 2 ---\nPayment due in thirty days"
    )
    assert not any(isinstance(m.get("content"), list) for m in server.requests[1]["messages"])


async def test_at_doc_pdf_sends_the_text_to_a_model_without_pdf_input(server, open_runtime):
    (open_runtime.workspace / "doc.pdf").write_bytes(text_pdf(PAGES))
    server.add(text("An invoice."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("summarise @doc.pdf"))
    finally:
        await runtime.close()
    tool = next(m for m in server.requests[0]["messages"] if m["role"] == "tool")
    assert tool["content"].startswith("📄 doc.pdf (PDF, pages 1-2 of 2; its text)\n--- page 1 ---\nInvoice 4711")


@pytest.mark.parametrize("llm_client", ["auto", "litellm"])
async def test_an_openai_model_that_takes_pdfs_gets_a_file_part(server, open_runtime, llm_client):
    data = text_pdf(PAGES)
    (open_runtime.workspace / "doc.pdf").write_bytes(data)
    server.add(tool_calls([READ]), text("An invoice."))
    runtime = await open_runtime(flags={"model": "openai/gpt-4o"})
    try:
        await runtime.submit(Prompt("what is doc.pdf?"))
        stored = await runtime.store.all_messages(runtime.session.id)
        result = next(m for m in stored if m.role == "tool")
        blob = await runtime.store.get_blob(result.meta["images"][0]["hash"])
    finally:
        await runtime.close()
    parts = [p for m in server.requests[1]["messages"] if isinstance(m.get("content"), list) for p in m["content"]]
    [file] = [p for p in parts if p.get("type") == "file"]
    assert file["file"]["filename"] == "doc.pdf"
    assert file["file"]["file_data"] == "data:application/pdf;base64," + base64.b64encode(data).decode()
    assert len(result.content) < 100 and "base64" not in str(result.meta)  # the bytes are a blob, not in the message
    assert blob == data
