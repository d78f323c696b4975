"""The fast path (agent/llm/fast.py) against the fake servers: it sends what litellm sends
for the same request, reads the same answer, and is chosen only where it applies."""

from __future__ import annotations

import json

import pytest

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.route import fast_wire
from agent.llm.sse import events
from tests.fakes.anthropic_server import FakeAnthropicServer, Thinking, breakpoints
from tests.fakes.anthropic_server import text as a_text
from tests.fakes.anthropic_server import tool_use as a_tool_use
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

PIXEL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "filesystem-read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]},
        },
    }
]
ephemeral = {"type": "ephemeral"}


# -- which client ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model,api_base,protocol,url,name",
    [
        ("openai/gpt-5.1", None, "openai", "https://api.openai.com/v1/chat/completions", "gpt-5.1"),
        ("gpt-4o", None, "openai", "https://api.openai.com/v1/chat/completions", "gpt-4o"),
        ("o3-mini", None, "openai", "https://api.openai.com/v1/chat/completions", "o3-mini"),
        (
            "openai/qwen2.5",
            "http://localhost:11434/v1/",
            "openai",
            "http://localhost:11434/v1/chat/completions",
            "qwen2.5",
        ),
        ("openai/org/model", "http://h:8000/v1", "openai", "http://h:8000/v1/chat/completions", "org/model"),
        (
            "anthropic/claude-sonnet-4-5",
            None,
            "anthropic",
            "https://api.anthropic.com/v1/messages",
            "claude-sonnet-4-5",
        ),
        ("claude-opus-4-1", None, "anthropic", "https://api.anthropic.com/v1/messages", "claude-opus-4-1"),
        ("anthropic/claude-x", "http://127.0.0.1:9/", "anthropic", "http://127.0.0.1:9/v1/messages", "claude-x"),
    ],
)
def test_fast_path_carries_openai_and_anthropic_protocols(model, api_base, protocol, url, name):
    wire = fast_wire(model, api_base)
    assert wire is not None
    assert (wire.protocol, wire.url, wire.model) == (protocol, url, name)


@pytest.mark.parametrize(
    "model",
    [
        "gemini/gemini-2.5-pro",
        "bedrock/anthropic.claude-3-5-sonnet",
        "vertex_ai/claude-sonnet-4-5",
        "mistral/mistral-large-latest",
        "deepseek/deepseek-chat",
        "openrouter/anthropic/claude-sonnet-4.5",
        "azure/gpt-4o",
        "ollama/llama3",
        "qwen",
        "",
    ],
)
def test_every_other_provider_goes_through_litellm(model):
    assert fast_wire(model) is None


def test_the_setting_sends_every_model_through_litellm():
    assert fast_wire("openai/gpt-4o", client="litellm") is None
    assert fast_wire("anthropic/claude-sonnet-4-5", client="litellm") is None


def test_base_url_variables_are_honoured_like_litellm(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://gw.example")
    assert fast_wire("gpt-4o").url == "https://proxy.example/v1/chat/completions"
    assert fast_wire("claude-sonnet-4-5").url == "https://gw.example/v1/messages"
    assert fast_wire("gpt-4o", "http://given/v1").url == "http://given/v1/chat/completions"  # the flag wins


# -- server-sent events ------------------------------------------------------------------------


async def _lines(*lines):
    for line in lines:
        yield line


async def test_sse_drops_comments_and_joins_data_lines():
    got = [
        (e.name, e.data)
        async for e in events(
            _lines(": ping", "", "event: message_start", 'data: {"a":', "data: 1}", "", ": keep-alive", "data:x", "")
        )
    ]
    assert got == [("message_start", '{"a":\n1}'), ("message", "x")]


async def test_sse_delivers_an_event_left_unterminated_at_the_end():
    assert [e.data async for e in events(_lines("data: [DONE]"))] == ["[DONE]"]


# -- the same request as litellm's -------------------------------------------------------------


def _conversation() -> list[dict]:
    """Every shape a request carries: marked system, text and image prompts, an assistant
    with thinking, text and tool calls (the last one marked), results (one marked)."""
    return [
        {"role": "system", "content": [{"type": "text", "text": "You are cairn.", "cache_control": ephemeral}]},
        {"role": "user", "content": "Read a.py and b.py"},
        {
            "role": "assistant",
            "content": "Reading both.",
            "thinking_blocks": [{"type": "thinking", "thinking": "Two reads.", "signature": "sig-1"}],
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "filesystem-read", "arguments": '{"filePath": "a.py"}'},
                },
                {
                    "id": "toolu_2",
                    "type": "function",
                    "function": {"name": "filesystem-read", "arguments": '{"filePath": "b.py"}'},
                    "cache_control": ephemeral,
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "print('a')"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "print('b')", "cache_control": ephemeral},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And this picture?"},
                {"type": "image_url", "image_url": {"url": PIXEL}},
            ],
        },
    ]


COMPARED = ("model", "system", "messages", "tools", "max_tokens", "thinking", "stream")


@pytest.mark.parametrize("effort", [None, "low"], ids=["no-thinking", "thinking"])
async def test_anthropic_request_is_what_litellm_sends(effort):
    with FakeAnthropicServer([a_text("one"), a_text("two")]) as srv:
        for client in ("litellm", "auto"):
            request = ChatRequest(
                model="anthropic/claude-sonnet-4-5",
                messages=_conversation(),
                tools=TOOLS,
                api_base=srv.base_url,
                api_key="sk-ant-test",
                max_tokens=8000,
                reasoning_effort=effort,
                client=client,
            )
            await stream_chat(request)
        via_litellm, fast = srv.requests
        assert not srv.rejections
        assert {k: fast.get(k) for k in COMPARED} == {k: via_litellm.get(k) for k in COMPARED}
        assert breakpoints(fast) == breakpoints(via_litellm) and len(breakpoints(fast)) == 3
        litellm_headers, fast_headers = srv.request_headers
        assert fast_headers["x-api-key"] == "sk-ant-test"
        assert fast_headers["anthropic-version"] == litellm_headers["anthropic-version"]


async def test_openai_request_is_what_litellm_sends():
    conversation = [
        {k: v for k, v in m.items() if k not in ("thinking_blocks", "cache_control")} for m in _conversation()
    ]
    conversation[0]["content"] = "You are cairn."
    with FakeLLMServer([text("one"), text("two")]) as srv:
        for client in ("litellm", "auto"):
            request = ChatRequest(
                model="openai/fake-model",
                messages=conversation,
                tools=TOOLS,
                api_base=srv.base_url,
                api_key="sk-test",
                max_tokens=4000,
                temperature=0.2,
                client=client,
            )
            await stream_chat(request)
        via_litellm, fast = srv.requests
    compared = ("model", "messages", "tools", "max_tokens", "temperature", "stream", "stream_options")
    assert {k: fast.get(k) for k in compared} == {k: via_litellm.get(k) for k in compared}


# -- the same answer as litellm's --------------------------------------------------------------


async def _both(server_type, steps, **request):
    results = []
    with server_type([*steps, *steps]) as srv:
        for client in ("litellm", "auto"):
            results.append(await stream_chat(ChatRequest(api_base=srv.base_url, client=client, **request)))
    return results


def _seen(result) -> dict:
    return {
        "content": result.content,
        "calls": [(c.id, c.name, json.loads(c.arguments)) for c in result.tool_calls],
        "finish": result.finish_reason,
        "tokens": (result.prompt_tokens, result.completion_tokens, result.cache_read_tokens, result.cache_write_tokens),
        "thinking": (result.thinking, result.thinking_blocks),
        "cost": round(result.cost, 9),
    }


async def test_anthropic_answer_reads_the_same_through_both_clients():
    steps = [
        a_tool_use(
            [("toolu_9", "filesystem-read", {"filePath": "c.py"})],
            text="Let me look.",
            input_tokens=120,
            cache_read_input_tokens=900,
            cache_creation_input_tokens=40,
        )
    ]
    steps[0].thinking = [Thinking(text="I should read c.py.", signature="sig-9")]
    via_litellm, fast = await _both(
        FakeAnthropicServer,
        steps,
        model="anthropic/claude-sonnet-4-5",
        messages=[{"role": "user", "content": "look at c.py"}],
        tools=TOOLS,
        api_key="sk-ant-test",
        max_tokens=8000,
        reasoning_effort="low",
    )
    assert _seen(fast) == _seen(via_litellm)
    assert fast.tool_calls and fast.thinking_blocks[0]["signature"] == "sig-9"
    assert fast.prompt_tokens == 120 + 900 + 40 and fast.cache_read_tokens == 900 and fast.cost > 0


async def test_openai_answer_reads_the_same_through_both_clients():
    steps = [tool_calls([("c1", "filesystem-read", '{"filePath": "a.py"}')], text="Reading.")]
    via_litellm, fast = await _both(
        FakeLLMServer,
        steps,
        model="openai/gpt-4o",
        messages=[{"role": "user", "content": "read a.py"}],
        tools=TOOLS,
        api_key="sk-test",
    )
    assert _seen(fast) == _seen(via_litellm)
    assert fast.tool_calls[0].name == "filesystem-read" and fast.cost > 0


async def test_a_turns_requests_reuse_one_connection():
    """The pool keeps the connection once an answer has ended (no TLS handshake per request
    against a real provider); an interrupted stream's connection is not reused."""
    from agent.llm.http import ConnectionPool

    pool = ConnectionPool()
    with FakeLLMServer([text("one"), text("two"), tool_calls([("c1", "filesystem-read", "{}")])]) as srv:
        try:
            for _ in range(3):
                await stream_chat(
                    ChatRequest(
                        model="openai/fake-model",
                        messages=[{"role": "user", "content": "hi"}],
                        tools=TOOLS,
                        api_base=srv.base_url,
                        api_key="sk-test",
                        connections=pool,
                    )
                )
        finally:
            await pool.aclose()
        assert len(srv.requests) == 3 and srv.connections_opened == 1
