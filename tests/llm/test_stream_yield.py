"""A fast stream leaves the event loop to the screen (agent/llm/client.py STREAM_YIELD_S).

Chunks litellm already buffered are iterated without returning to the loop; without the
periodic yield a burst of them froze the UI (and Esc) for hundreds of ms."""

from __future__ import annotations

import asyncio

from agent.llm import client
from agent.llm.client import ChatRequest, stream_chat
from tests.fakes.llm_server import FakeLLMServer, text

WORDS = " ".join(f"w{i}" for i in range(400))


async def _interleaving(server: FakeLLMServer) -> list[str]:
    seen: list[str] = []
    done = False

    async def beat() -> None:
        while not done:
            seen.append("beat")
            await asyncio.sleep(0)

    heart = asyncio.create_task(beat())
    try:
        request = ChatRequest(
            model="openai/fake",
            messages=[{"role": "user", "content": "go"}],
            tools=[],
            api_base=server.base_url,
            api_key="sk-test",
        )
        result = await stream_chat(request, on_text=lambda t: seen.append("text"))
    finally:
        done = True
        await heart
    assert result.content == WORDS
    return seen


async def test_the_loop_runs_between_buffered_chunks(monkeypatch):
    monkeypatch.setattr(client, "STREAM_YIELD_S", 0.0)  # yield after every chunk
    with FakeLLMServer([text(WORDS, chunk_size=4)]) as server:  # all chunks at once: a burst
        seen = await _interleaving(server)
    texts = [i for i, kind in enumerate(seen) if kind == "text"]
    assert len(texts) > 100
    between = [seen[a + 1 : b] for a, b in zip(texts, texts[1:], strict=False)]
    assert all("beat" in gap for gap in between)  # never two chunks without the loop running
