"""Token counts: written with each tool result, reused on resume instead of re-encoding."""

from __future__ import annotations

from agent.context.tokens import TOKENS_META_KEY, TokenCounter
from agent.runtime.ops import Prompt
from agent.session.models import Message
from tests.fakes.llm_server import text, tool_calls


async def test_tool_results_carry_their_count_and_a_reload_does_not_encode(server, open_runtime, workspace):
    (workspace / "big.txt").write_text("".join(f"line {i} of a long file\n" for i in range(400)))
    server.add(tool_calls([("c1", "filesystem-read", {"filePath": "big.txt"})]), text("Read it."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("read big.txt"))
        stored = [m for m in await runtime.store.active_path(runtime.session.id) if m.role == "tool"][0]
    finally:
        await runtime.close()
    meta = stored.meta[TOKENS_META_KEY]
    assert meta["encoding"] == "o200k_base" and meta["chars"] == len(stored.content)

    fresh = TokenCounter("o200k_base")
    expected = fresh.count_message(stored.to_api())
    assert meta["count"] == expected

    class NoEncoding(TokenCounter):
        def _encode_len(self, text: str) -> int:
            raise AssertionError("re-encoded a stored tool output")

    assert NoEncoding("o200k_base").count_stored(stored.model_copy()) == expected


def test_a_stored_count_is_ignored_when_the_content_changed():
    counter = TokenCounter("o200k_base")
    message = Message(role="tool", tool_call_id="c1", tool_name="terminal-execute", content="x " * 500)
    counter.remember_count(message)
    shortened = message.model_copy(update={"content": "placeholder"})
    assert counter.count_stored(shortened) == counter.count_message(shortened.to_api())
    other = TokenCounter("cl100k_base")
    assert other._stored_count(message) is None  # another encoding counts for itself
