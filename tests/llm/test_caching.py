"""Prompt caching (agent/llm/caching.py): breakpoints reach Anthropic's wire format through
real litellm, and cache reads / writes are read back from litellm's normalised usage.

The end-to-end tests stream through `litellm.acompletion` as agent/llm/client.py does, against
tests/fakes/anthropic_server.py (which rejects what Anthropic rejects: more than 4
cache_control blocks, empty text blocks, missing headers) and, for OpenAI's automatic
caching, tests/fakes/llm_server.py.
"""

from __future__ import annotations

import copy
import json

import pytest

from agent.llm.caching import MAX_BREAKPOINTS, breakpoint_style, cache_tokens, can_carry, with_breakpoints
from agent.llm.offline import import_litellm
from tests.fakes.anthropic_server import breakpoints, text, tool_use
from tests.fakes.llm_server import FakeLLMServer, raw

EPHEMERAL = {"type": "ephemeral"}
MODEL = "anthropic/claude-sonnet-4-5"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "filesystem-read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "terminal-run",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    },
]


def _conversation() -> list[dict]:
    """What the pipeline sends (agent/session/models.py Message.to_api): a tool-calling
    assistant message has content None, a tool result a string."""
    return [
        {"role": "system", "content": "You are cairn, a coding agent."},
        {"role": "user", "content": "What does a.py print?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "toolu_01",
                    "type": "function",
                    "function": {"name": "filesystem-read", "arguments": '{"filePath": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01", "content": "print('hello')"},
        {"role": "assistant", "content": "It prints hello."},
        {"role": "user", "content": "And b.py?"},
    ]


async def _stream(server, messages, tools=None, model=MODEL, api_key="sk-ant-test"):
    """One streamed completion, the way agent/llm/client.py asks for it; returns (text, usage)."""
    litellm = import_litellm()
    kwargs = dict(
        model=model,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        api_base=server.base_url,
        api_key=api_key,
        num_retries=0,
        max_retries=0,
        timeout=30,
    )
    if tools:
        kwargs["tools"] = tools
    stream = await litellm.acompletion(**kwargs)
    content, usage = "", None
    async for chunk in stream:
        usage = getattr(chunk, "usage", None) or usage
        for choice in chunk.choices:
            content += getattr(choice.delta, "content", None) or ""
    return content, usage


# --------------------------------------------------------------------------- breakpoint_style


@pytest.mark.parametrize(
    "model, style",
    [
        ("anthropic/claude-sonnet-4-5", "explicit"),
        ("anthropic/claude-3-5-haiku-20241022", "explicit"),
        ("claude-sonnet-4-5", "explicit"),
        ("claude-opus-4-1-20250805", "explicit"),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "explicit"),
        ("bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "explicit"),
        ("bedrock/converse/us.anthropic.claude-sonnet-4-20250514-v1:0", "explicit"),
        ("bedrock/invoke/anthropic.claude-3-haiku-20240307-v1:0", "explicit"),
        ("bedrock_mantle/anthropic.claude-sonnet-4-5", "explicit"),
        ("vertex_ai/claude-sonnet-4-5@20250929", "explicit"),
        ("azure_ai/claude-sonnet-4-5", "explicit"),
        ("openrouter/anthropic/claude-sonnet-4.5", "explicit"),
        ("databricks/databricks-claude-sonnet-4-5", "explicit"),
        ("snowflake/claude-3-5-sonnet", "explicit"),
        ("Anthropic/Claude-Sonnet-4-5", "explicit"),
        ("openai/gpt-4o", "automatic"),
        ("openai/fake-model", "automatic"),
        ("gpt-4.1", "automatic"),
        ("o3-mini", "automatic"),
        ("azure/my-gpt-4o-deployment", "automatic"),
        ("azure_ai/deepseek-r1", "automatic"),
        ("deepseek/deepseek-chat", "automatic"),
        ("gemini/gemini-2.5-pro", "automatic"),
        ("vertex_ai/gemini-2.5-flash", "automatic"),
        ("xai/grok-4", "automatic"),
        ("groq/moonshotai/kimi-k2-instruct", "automatic"),
        ("openrouter/openai/gpt-4o", "automatic"),
        ("openrouter/google/gemini-2.5-pro", "automatic"),
        ("dashscope/qwen-max", "automatic"),
        ("bedrock/amazon.nova-pro-v1:0", "none"),
        ("vertex_ai/meta/llama-3.1-405b-instruct-maas", "none"),
        ("ollama/llama3", "none"),
        ("ollama_chat/qwen2.5-coder", "none"),
        ("hosted_vllm/my-model", "none"),
        ("lm_studio/local", "none"),
        ("my-local-model", "none"),
        ("", "none"),
    ],
)
def test_breakpoint_style(model, style):
    assert breakpoint_style(model) == style


# --------------------------------------------------------------------------- with_breakpoints


def test_inputs_are_not_mutated_and_unchanged_messages_are_shared():
    messages, tools = _conversation(), copy.deepcopy(TOOLS)
    before_m, before_t = copy.deepcopy(messages), copy.deepcopy(tools)
    out, out_tools = with_breakpoints(messages, tools, [3, 5])
    assert messages == before_m and tools == before_t
    assert out is not messages and out_tools is not tools
    assert [i for i, (a, b) in enumerate(zip(out, messages, strict=False)) if a is not b] == [0, 3, 5]
    assert all(a is b for a, b in zip(out_tools, tools, strict=False))  # the system mark covers the tools


def test_shapes_of_each_kind_of_message():
    messages = _conversation()
    out, tools = with_breakpoints(messages, TOOLS, [2, 3, 5])
    assert out[0] == {
        "role": "system",
        "content": [{"type": "text", "text": "You are cairn, a coding agent.", "cache_control": EPHEMERAL}],
    }
    # assistant with tool calls: on the last call (litellm → tool_use block); content stays None
    assert out[2]["content"] is None and "cache_control" not in out[2]
    assert out[2]["tool_calls"][-1]["cache_control"] == EPHEMERAL
    assert out[2]["tool_calls"][-1]["function"] == messages[2]["tool_calls"][0]["function"]
    # tool result: message level (litellm → tool_result block); content stays a string
    assert out[3] == {**messages[3], "cache_control": EPHEMERAL}
    assert out[5] == {"role": "user", "content": [{"type": "text", "text": "And b.py?", "cache_control": EPHEMERAL}]}
    assert out[1] is messages[1] and out[4] is messages[4]
    assert tools is not TOOLS and tools == TOOLS


def test_marks_are_separate_dicts():
    out, _ = with_breakpoints(_conversation(), None, [3, 5])
    assert out[0]["content"][0]["cache_control"] is not out[5]["content"][0]["cache_control"]


def _count(messages, tools) -> int:
    text = json.dumps([messages, tools])
    return text.count('"cache_control"')


def test_at_most_four_and_the_latest_positions_win():
    messages = [{"role": "system", "content": "sys"}]
    for i in range(8):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"})
    out, tools = with_breakpoints(messages, TOOLS, list(range(1, 9)))
    assert _count(out, tools) == MAX_BREAKPOINTS
    assert [i for i, m in enumerate(out) if m is not messages[i]] == [0, 6, 7, 8]

    no_system = messages[1:]
    out, tools = with_breakpoints(no_system, TOOLS, list(range(8)))
    assert _count(out, tools) == MAX_BREAKPOINTS
    assert tools[-1]["cache_control"] == EPHEMERAL and tools[0] is TOOLS[0]
    assert [i for i, m in enumerate(out) if m is not no_system[i]] == [5, 6, 7]

    out, tools = with_breakpoints(no_system, None, list(range(8)))
    assert tools is None and _count(out, tools) == MAX_BREAKPOINTS
    assert [i for i, m in enumerate(out) if m is not no_system[i]] == [4, 5, 6, 7]


def test_positions_negative_out_of_range_and_duplicates():
    messages = _conversation()
    out, _ = with_breakpoints(messages, None, [-1, 5, 99, -99, -3])
    assert [i for i, m in enumerate(out) if m is not messages[i]] == [0, 3, 5]
    out, _ = with_breakpoints(messages, None, [0])  # the system message counts once
    assert _count(out, None) == 1


@pytest.mark.parametrize(
    "empty",
    [
        {"role": "user", "content": ""},
        {"role": "user", "content": "  \n"},
        {"role": "user", "content": []},
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": None},
        {"role": "tool", "tool_call_id": "toolu_01", "content": ""},
        {"role": "system", "content": "a mid-conversation system message goes into the system prompt"},
    ],
)
def test_a_message_that_cannot_carry_one_hands_it_to_the_nearest_earlier(empty):
    messages = _conversation()[:5] + [empty]
    assert not can_carry(empty) or empty["role"] == "system"
    out, _ = with_breakpoints(messages, None, [5])
    assert out[5] is empty
    assert out[4] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "It prints hello.", "cache_control": EPHEMERAL}],
    }
    assert _count(out, None) == 2


def test_fallback_onto_a_marked_message_or_past_the_start_adds_nothing():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": ""},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": ""},
    ]
    out, _ = with_breakpoints(messages, None, [1, 2, 3])
    assert [i for i, m in enumerate(out) if m is not messages[i]] == [0, 2]
    out, tools = with_breakpoints([{"role": "user", "content": ""}], TOOLS, [0])
    assert _count(out, None) == 0 and tools[-1]["cache_control"] == EPHEMERAL


def test_blank_system_message_leaves_the_breakpoint_to_the_tools():
    messages = [{"role": "system", "content": ""}, {"role": "user", "content": "hi"}]
    out, tools = with_breakpoints(messages, TOOLS, [1])
    assert out[0] is messages[0]
    assert tools[-1] == {**TOOLS[-1], "cache_control": EPHEMERAL}
    assert out[1]["content"][0]["cache_control"] == EPHEMERAL


def test_list_content_marks_its_last_markable_block():
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": " "},
        ],
    }
    out, _ = with_breakpoints([message], None, [0])
    assert out[0]["content"][1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in out[0]["content"][0] and out[0]["content"][2] is message["content"][2]
    assert "cache_control" not in message["content"][1]


def test_assistant_text_and_several_tool_calls_mark_the_last_call():
    message = {
        "role": "assistant",
        "content": "Reading both.",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "filesystem-read", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "filesystem-read", "arguments": "{}"}},
        ],
    }
    out, _ = with_breakpoints([{"role": "user", "content": "go"}, message], None, [1])
    assert out[1]["content"] == "Reading both."
    assert "cache_control" not in out[1]["tool_calls"][0] and out[1]["tool_calls"][0] is message["tool_calls"][0]
    assert out[1]["tool_calls"][1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in message["tool_calls"][1]


# --------------------------------------------------------------------------- cache_tokens


def test_cache_tokens_reads_dicts_objects_and_nothing():
    assert cache_tokens(None) == (0, 0)
    assert cache_tokens({"prompt_tokens": 10}) == (0, 0)
    assert cache_tokens({"cache_read_input_tokens": 7, "cache_creation_input_tokens": 3}) == (7, 3)
    assert cache_tokens({"prompt_tokens_details": {"cached_tokens": 5, "cache_write_tokens": 2}}) == (5, 2)
    assert cache_tokens({"prompt_tokens_details": {"cached_tokens": None, "cache_creation_tokens": 4}}) == (0, 4)


# --------------------------------------------------------------------------- through litellm


async def test_breakpoints_reach_anthropic_blocks_and_cache_counts_come_back(anthropic_server):
    anthropic_server.add(
        text(
            "b.py prints bye.",
            input_tokens=21,
            output_tokens=6,
            cache_read_input_tokens=1800,
            cache_creation_input_tokens=320,
        )
    )
    messages = _conversation()
    # Anthropic merges the tool result and the next user turn into one user message.
    messages[4:5] = []
    messages_before, tools_before = copy.deepcopy(messages), copy.deepcopy(TOOLS)
    request, tools = with_breakpoints(messages, TOOLS, [2, 3, 4])  # tool call, tool result, newest user
    request_before = copy.deepcopy(request)

    content, usage = await _stream(anthropic_server, request, tools)

    assert content == "b.py prints bye."
    assert anthropic_server.rejections == []
    body = anthropic_server.requests[-1]
    assert body["model"] == "claude-sonnet-4-5" and body["stream"] is True
    assert breakpoints(body) == [
        "system[0]",
        "messages[1].content[0]",
        "messages[2].content[0]",
        "messages[2].content[1]",
    ]
    assert body["system"] == [{"type": "text", "text": "You are cairn, a coding agent.", "cache_control": EPHEMERAL}]
    assert body["messages"][1]["content"] == [
        {
            "type": "tool_use",
            "id": "toolu_01",
            "name": "filesystem-read",
            "input": {"filePath": "a.py"},
            "cache_control": EPHEMERAL,
        }
    ]
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "print('hello')", "cache_control": EPHEMERAL},
            {"type": "text", "text": "And b.py?", "cache_control": EPHEMERAL},
        ],
    }
    # The tool definitions arrive whole and unmarked: they precede the system block, whose mark covers them.
    assert [(t["name"], t["description"], t["input_schema"]) for t in body["tools"]] == [
        (t["function"]["name"], t["function"]["description"], t["function"]["parameters"]) for t in TOOLS
    ]
    assert all("cache_control" not in t for t in body["tools"])
    headers = anthropic_server.request_headers[-1]
    assert headers["x-api-key"] == "sk-ant-test" and headers["anthropic-version"] == "2023-06-01"
    # Neither we nor litellm changed what we were given.
    assert messages == messages_before and tools_before == TOOLS and request == request_before

    assert cache_tokens(usage) == (1800, 320)
    # litellm's prompt_tokens counts every input token: uncached + cache read + cache write.
    assert usage.prompt_tokens == 21 + 1800 + 320
    assert usage.completion_tokens == 6
    assert usage.prompt_tokens_details.cached_tokens == 1800
    assert usage.prompt_tokens_details.text_tokens == 21


async def test_without_a_system_message_the_last_tool_carries_the_first_breakpoint(anthropic_server):
    anthropic_server.add(
        tool_use([("toolu_02", "terminal-run", {"command": "ls"})], text="Listing.", cache_creation_input_tokens=900)
    )
    messages = [{"role": "user", "content": "List the files."}]
    request, tools = with_breakpoints(messages, TOOLS, [-1])
    _, usage = await _stream(anthropic_server, request, tools)
    body = anthropic_server.requests[-1]
    assert breakpoints(body) == ["tools[1]", "messages[0].content[0]"]
    assert body["tools"][1]["cache_control"] == EPHEMERAL and "system" not in body
    assert cache_tokens(usage) == (0, 900)


async def test_four_breakpoints_pass_and_a_fifth_is_refused_like_anthropic(anthropic_server):
    litellm = import_litellm()
    messages = [{"role": "system", "content": "sys"}]
    for i in range(9):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"})
    anthropic_server.add(text("fine"))
    request, tools = with_breakpoints(messages, TOOLS, list(range(1, 10)))
    await _stream(anthropic_server, request, tools)
    assert len(breakpoints(anthropic_server.requests[-1])) == 4 and anthropic_server.rejections == []

    marked = [{**m, "content": [{"type": "text", "text": m["content"], "cache_control": EPHEMERAL}]} for m in messages]
    with pytest.raises(litellm.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        await _stream(anthropic_server, marked[:5])
    assert len(anthropic_server.rejections) == 1


@pytest.mark.parametrize("full_delta_usage", [False, True])
async def test_usage_is_the_same_whether_message_delta_repeats_the_input_counts(anthropic_server, full_delta_usage):
    anthropic_server.add(
        text(
            "ok",
            input_tokens=5,
            output_tokens=2,
            cache_read_input_tokens=4000,
            cache_creation_input_tokens=0,
            full_delta_usage=full_delta_usage,
        )
    )
    _, usage = await _stream(anthropic_server, [{"role": "user", "content": "hi"}])
    assert cache_tokens(usage) == (4000, 0)
    assert (usage.prompt_tokens, usage.completion_tokens) == (4005, 2)


def _openai_stream_with_cached_tokens(prompt: int, cached: int, completion: int) -> list[str]:
    """SSE lines of an OpenAI stream whose usage chunk reports `cached` prompt tokens
    (tests/fakes/llm_script.py's usage has no prompt_tokens_details, so raw())."""
    base = {
        "id": "chatcmpl-cache",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "gpt-4o",
        "system_fingerprint": "fp_fake",
    }
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {"content": "hello"}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            **base,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        },
    ]
    lines = []
    for chunk in chunks:
        lines += [f"data: {json.dumps(chunk)}", ""]
    return lines + ["data: [DONE]", ""]


async def test_openai_cached_tokens_are_cache_reads():
    with FakeLLMServer([raw(_openai_stream_with_cached_tokens(2048, 1536, 3))]) as server:
        content, usage = await _stream(
            server, [{"role": "user", "content": "hi"}], model="openai/gpt-4o", api_key="sk-test"
        )
        assert server.pending == 0
    assert content == "hello"
    assert cache_tokens(usage) == (1536, 0)
    assert usage.prompt_tokens == 2048  # OpenAI's prompt_tokens already include the cached ones
