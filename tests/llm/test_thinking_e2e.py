"""Issue 28: a Claude model that thinks, through real litellm to a fake speaking the
Anthropic Messages API with thinking and signature_delta events: the effort asks for a
thinking budget, the signed thinking is stored with its message and goes back, unchanged,
before the tool call it led to, on the next request and after a resume."""

from __future__ import annotations

from agent.llm.reasoning import THINKING_BUDGET
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import SetEffort
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes.anthropic_server import Thinking, text, tool_use

MODEL = "anthropic/claude-sonnet-4-5"
THOUGHT = "The user wants x. I should read a.py first, then answer from what it says."
SIGNATURE = "EqQBCkgIARABGAIiQL2yQ+signature/bytes=="


def _settings(workspace, server, effort="high", max_output=None):
    flags = {"model": MODEL, "api_base": server.base_url, "api_key": "sk-ant-test", "yolo": True}
    flags["llm"] = {"reasoning_effort": effort, **({"max_output_tokens": max_output} if max_output else {})}
    return load_settings(workspace, flags=flags)


async def test_thinking_is_asked_for_stored_and_sent_back_before_its_tool_call(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        tool_use(
            [("toolu_1", "filesystem-read", {"filePath": "a.py"})],
            thinking=[Thinking(THOUGHT, SIGNATURE)],
            chunk_size=7,
        ),
        text("x is 1.", thinking=[Thinking("It says x = 1.", "sig-2")]),
    )
    events: list = []
    runtime = await Runtime.open(_settings(workspace, anthropic_server), FrontEnd(on_event=events.append))
    try:
        await runtime.agent.run_turn("what is x?")
        first, second = anthropic_server.requests
        assert first["thinking"] == {"type": "enabled", "budget_tokens": THINKING_BUDGET["high"]}
        assert first["max_tokens"] > THINKING_BUDGET["high"]
        answered = second["messages"][-2]
        assert answered["role"] == "assistant"
        assert answered["content"][0] == {"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE}
        assert answered["content"][1]["type"] == "tool_use" and answered["content"][1]["id"] == "toolu_1"
        history = await runtime.agent.current_history()
        answers = [m for m in history if m.role == "assistant"]
        assert answers[0].meta["thinking"] == THOUGHT
        assert answers[0].meta["thinking_blocks"] == [{"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE}]
        assert answers[1].meta["thinking"] == "It says x = 1." and answers[1].content == "x is 1."
        deltas = "".join(e.text for e in events if type(e).__name__ == "ThinkingDelta")
        assert deltas == THOUGHT + "It says x = 1."
        session_id = runtime.session.id
    finally:
        await runtime.close()

    # Resumed: the stored blocks go back byte for byte in the next request's history.
    anthropic_server.add(text("Still 1."))
    settings = _settings(workspace, anthropic_server)
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda e: None), resume_id=session_id)
    try:
        await runtime.agent.run_turn("and now?")
        third = anthropic_server.requests[-1]
        sent = [m for m in third["messages"] if m["role"] == "assistant"]
        assert sent[0]["content"][0] == {"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE}
    finally:
        await runtime.close()


async def test_a_small_output_limit_grows_to_fit_the_thinking_budget(anthropic_server, workspace):
    anthropic_server.add(text("hi"))
    settings = _settings(workspace, anthropic_server, effort="medium", max_output=512)
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda e: None))
    try:
        await runtime.agent.run_turn("hello")
        [request] = anthropic_server.requests
        assert request["thinking"]["budget_tokens"] == THINKING_BUDGET["medium"]
        assert request["max_tokens"] > request["thinking"]["budget_tokens"]
    finally:
        await runtime.close()


async def test_off_sends_no_thinking_and_strips_stored_blocks(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        tool_use([("toolu_1", "filesystem-read", {"filePath": "a.py"})], thinking=[Thinking(THOUGHT, SIGNATURE)]),
        text("x is 1."),
    )
    runtime = await Runtime.open(_settings(workspace, anthropic_server), FrontEnd(on_event=lambda e: None))
    try:
        await runtime.agent.run_turn("what is x?")
        runtime.submit(SetEffort("off"))  # what /effort sets
        anthropic_server.add(text("ok"))
        await runtime.agent.run_turn("thanks")
        last = anthropic_server.requests[-1]
        assert "thinking" not in last
        assert all(b.get("type") != "thinking" for m in last["messages"] for b in m["content"] if isinstance(b, dict))
    finally:
        await runtime.close()


async def test_openai_style_reasoning_is_shown_stored_and_priced(workspace):
    from agent.llm.cost_map import request_cost
    from tests.fakes.llm_script import text as openai_text
    from tests.fakes.llm_server import FakeLLMServer

    model = "openai/gpt-5.1"
    reply = openai_text(
        "Forty-two.", reasoning="Six times seven.", reasoning_tokens=50, prompt_tokens=900, completion_tokens=80
    )
    with FakeLLMServer([reply]) as server:
        flags = {"model": model, "api_base": server.base_url, "api_key": "sk-test", "llm": {"reasoning_effort": "low"}}
        events: list = []
        runtime = await Runtime.open(load_settings(workspace, flags=flags), FrontEnd(on_event=events.append))
        try:
            await runtime.agent.run_turn("six times seven?")
            [request] = server.requests
            assert request["reasoning_effort"] == "low"
            [answer] = [m for m in await runtime.agent.current_history() if m.role == "assistant"]
        finally:
            await runtime.close()
    assert "".join(e.text for e in events if type(e).__name__ == "ThinkingDelta") == "Six times seven."
    assert answer.meta["thinking"] == "Six times seven." and "thinking_blocks" not in answer.meta
    assert answer.meta["usage"]["reasoning_tokens"] == 50
    # Reasoning tokens are output tokens: completion_tokens counts them, and the cost with them.
    expected = request_cost(model, prompt_tokens=900, completion_tokens=80)
    assert expected is not None and answer.meta["cost"] == expected.total > 0
