"""The whole answer's cap (agent/llm/wire_limits.py MAX_ANSWER_CHARS) counts every field the
client keeps, not only text and arguments: a server that streams, without end, tool calls at a
new index each (a long name and id, no arguments), or thinking blocks (redacted data, or a
signature that opens a new block each time) is stopped like one that streams text forever.

Red-team variants of issue 43 class 7 (an endless answer grew memory without bound)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import ResponseTooLargeError
from agent.llm.wire_limits import MAX_ANSWER_CHARS, MIB
from tests.fakes.hostile_http import Endless

SLACK = 24 * MIB
LIMIT = MAX_ANSWER_CHARS + 4 * SLACK  # the server gives up here: far past the cap


def _openai(delta: dict) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _anthropic(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


ANTHROPIC_HEAD = _anthropic(
    "message_start", {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": [], "usage": {}}}
)


def _new_calls(n: int) -> bytes:
    call = {"index": n, "id": "i" * 4096, "type": "function", "function": {"name": "n" * 8192, "arguments": ""}}
    return _openai({"tool_calls": [call]})


def _redacted_blocks(n: int) -> bytes:
    block = {"type": "redacted_thinking", "data": "d" * 16384}
    return _anthropic("content_block_start", {"type": "content_block_start", "index": n, "content_block": block})


def _signatures(_: int) -> bytes:
    delta = {"type": "signature_delta", "signature": "s" * 16384}
    return _anthropic("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})


@pytest.mark.parametrize(
    ("model", "head", "unit"),
    [
        ("openai/gpt-4o", _openai({"role": "assistant", "content": ""}), _new_calls),
        ("anthropic/claude-sonnet-4-5", ANTHROPIC_HEAD, _redacted_blocks),
        ("anthropic/claude-sonnet-4-5", ANTHROPIC_HEAD, _signatures),
    ],
    ids=["tool-calls-at-new-indices", "redacted-thinking-blocks", "signatures"],
)
async def test_an_endless_answer_of_kept_fields_is_given_up(model, head, unit):
    server = Endless(unit, head=head, limit=LIMIT)
    with server:
        request = ChatRequest(
            model=model,
            messages=[{"role": "user", "content": "hi"}],
            tools=[],
            api_base=server.base_url,
            api_key="sk-test",
            max_tokens=100,
        )
        with pytest.raises(ResponseTooLargeError) as caught:
            await stream_chat(request)
        stopped = await asyncio.to_thread(server.stopped.wait, 30)
        assert stopped, "the server is still writing: the client never closed the connection"
    assert not server.hit_limit and server.sent < MAX_ANSWER_CHARS + SLACK, f"read {server.sent / MIB:.0f} MiB"
    assert f"passed {MAX_ANSWER_CHARS // MIB} MiB" in str(caught.value)


async def test_a_long_tool_call_in_small_pieces_naming_itself_each_time_passes():
    """A route that repeats the call's name and id with every piece is not charged for them again."""
    pieces = [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "filesystem-create", "arguments": ""}}
    ]
    body = '{"path": "a", "content": "' + "x" * (3 * MIB) + '"}'
    step = 64
    pieces += [
        {"index": 0, "id": "call_1", "function": {"name": "filesystem-create", "arguments": body[i : i + step]}}
        for i in range(0, len(body), step)
    ]
    events = b"".join(_openai({"tool_calls": [p]}) for p in pieces)
    finish = {"id": "c", "object": "chat.completion.chunk", "model": "m"}
    finish["choices"] = [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]
    events += b"data: " + json.dumps(finish).encode() + b"\n\ndata: [DONE]\n\n"
    server = Endless(b"", head=events, limit=len(events))  # the whole answer as the head, then nothing
    with server:
        request = ChatRequest(
            model="openai/gpt-4o",
            messages=[{"role": "user", "content": "hi"}],
            tools=[],
            api_base=server.base_url,
            api_key="sk-test",
            max_tokens=100,
        )
        result = await stream_chat(request)
    assert result.tool_calls and result.tool_calls[0].arguments == body
