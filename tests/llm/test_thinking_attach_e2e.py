"""An `@file` read on a Claude model that thinks: Anthropic requires signed thinking before a
tool call it continues from, and the read cairn made for the user has none. The request after
it goes without thinking (the fake refuses it otherwise, as Anthropic does), and the next
turn thinks again."""

from __future__ import annotations

from agent.llm.reasoning import unsigned_tool_loop
from agent.runtime.opening import FrontEnd
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes.anthropic_server import Thinking, text

MODEL = "anthropic/claude-sonnet-4-5"


async def test_the_request_after_an_attached_read_goes_without_thinking(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        text("Hello.", thinking=[Thinking("Greet them.", "sig-1")]),
        text("x is 1."),
        text("Yes.", thinking=[Thinking("Still 1.", "sig-2")]),
    )
    flags = {"model": MODEL, "api_base": anthropic_server.base_url, "api_key": "sk-ant-test", "yolo": True}
    flags["llm"] = {"reasoning_effort": "high"}
    runtime = await Runtime.open(load_settings(workspace, flags=flags), FrontEnd(on_event=lambda e: None))
    try:
        await runtime.agent.run_turn("hi")
        await runtime.agent.run_turn("what is x in @a.py?")
        await runtime.agent.run_turn("sure?")
        first, second, third = anthropic_server.requests
        assert "thinking" in first and "thinking" not in second and "thinking" in third
        read = second["messages"][-1]["content"][0]
        assert read["type"] == "tool_result" and "1→x = 1" in str(read["content"])
        assert all(
            block.get("type") != "thinking"
            for m in second["messages"]
            if isinstance(m["content"], list)
            for block in m["content"]
        )
    finally:
        await runtime.close()


def test_unsigned_tool_loop_looks_at_the_last_assistant_message():
    call = [{"id": "c1", "type": "function", "function": {"name": "filesystem-read", "arguments": "{}"}}]
    signed = {"role": "assistant", "content": None, "tool_calls": call, "thinking_blocks": [{"type": "thinking"}]}
    unsigned = {"role": "assistant", "content": None, "tool_calls": call}
    result = {"role": "tool", "tool_call_id": "c1", "content": "x"}
    answer = {"role": "assistant", "content": "done"}
    user = {"role": "user", "content": "hi"}
    assert unsigned_tool_loop([user, unsigned, result])
    assert not unsigned_tool_loop([user, signed, result])
    assert not unsigned_tool_loop([user, unsigned, result, answer, user])
    assert not unsigned_tool_loop([user])
