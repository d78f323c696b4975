"""Caps on what cairn reads from a model's server (agent/llm/wire_limits.py): a server that
never ends a line, an event, a tool call or a body gets a typed error the user can read, and
the client stops reading (the server sees the connection close long before its own limit).

Each end-to-end test uses tests/fakes/hostile_http.py's `Endless`, which writes until the
client goes away and counts what it wrote."""

from __future__ import annotations

import asyncio
import json
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import ResponseTooLargeError
from agent.llm.wire_limits import (
    MAX_ANSWER_CHARS,
    MAX_RESPONSE_BODY_BYTES,
    MAX_SSE_EVENT_BYTES,
    MAX_SSE_LINE_BYTES,
    MAX_TOOL_ARGUMENTS_CHARS,
    MIB,
    Meter,
    ResponseTooLarge,
)
from tests.fakes.hostile_http import Endless

# What the kernel's socket buffers and the reader's last piece may hold beyond a cap.
SLACK = 24 * MIB
PIECE = 64 * 1024
OPENAI = "openai/gpt-4o"
ANTHROPIC = "anthropic/claude-sonnet-4-5"


# -- the meter itself -----------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json", "application/x-ndjson", ""])
def test_a_line_without_end_is_stopped_at_the_cap_whatever_the_label(content_type):
    meter = Meter(content_type)
    meter.feed(b"data: {")
    with pytest.raises(ResponseTooLarge, match="one line"):
        for _ in range(MAX_SSE_LINE_BYTES // PIECE + 2):
            meter.feed(b"x" * PIECE)


@pytest.mark.parametrize("content_type", ["text/event-stream; charset=utf-8", "application/json"])
def test_an_event_of_short_lines_without_a_blank_line_is_stopped_at_the_cap(content_type):
    meter = Meter(content_type)
    with pytest.raises(ResponseTooLarge, match="one event"):
        for _ in range(MAX_SSE_EVENT_BYTES // PIECE + 2):
            meter.feed(b"data: " + b"x" * (PIECE - 7) + b"\n")


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/x-ndjson", "application/vnd.amazon.eventstream"]
)
def test_a_body_read_whole_is_stopped_at_its_cap(content_type):
    meter = Meter(content_type)
    with pytest.raises(ResponseTooLarge, match="response body"):
        for _ in range(MAX_RESPONSE_BODY_BYTES // PIECE + 2):
            meter.feed(b"{}\n\n" * (PIECE // 4))  # blank lines do not help a body that is not SSE


def test_a_binary_body_has_no_lines_to_cap():
    meter = Meter("application/vnd.amazon.eventstream")
    for _ in range(MAX_SSE_EVENT_BYTES // PIECE + 2):
        meter.feed(b"x" * PIECE)


def test_an_sse_stream_of_short_events_has_no_cap_on_the_whole():
    meter = Meter("text/event-stream")
    for _ in range(MAX_RESPONSE_BODY_BYTES // PIECE + 2):
        meter.feed(b"data: " + b"x" * (PIECE - 8) + b"\n\n")
    assert meter.total > MAX_RESPONSE_BODY_BYTES


def test_an_ndjson_stream_has_no_blank_lines_to_wait_for():
    meter = Meter("application/x-ndjson")
    for _ in range(MAX_SSE_EVENT_BYTES // PIECE + 2):
        meter.feed(b"x" * (PIECE - 1) + b"\n")
    assert meter.total > MAX_SSE_EVENT_BYTES


@given(
    events=st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")), max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=20_000), max_size=30),
    ending=st.sampled_from([b"\n\n", b"\r\n\r\n", b"\r\r"]),
)
def test_a_stream_of_short_events_passes_however_it_is_cut(events, cuts, ending):
    """Where the network splits a stream never matters: counted bytes restart at every event end."""
    stream = b"".join(b"data: " + e + ending for e in events) * 200
    meter = Meter("text/event-stream")
    at = 0
    for cut in sorted(set(cuts)) + [len(stream)]:
        meter.feed(stream[at:cut])
        at = max(at, cut)
    assert meter.event < 400 * 3 and meter.line < 400


# -- end to end -----------------------------------------------------------------------


def _request(model: str, base: str, client: str) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=[{"role": "user", "content": "hi"}],
        tools=[],
        api_base=base,
        api_key="sk-test",
        client=client,
        max_tokens=100,
    )


async def _too_large(server: Endless, model: str, client: str = "auto", cap: int = MAX_SSE_LINE_BYTES) -> str:
    with server:
        with pytest.raises(ResponseTooLargeError) as caught:
            await stream_chat(_request(model, server.base_url, client))
        # Waited for off the loop: the client's socket closes in a callback the loop must run.
        stopped = await asyncio.to_thread(server.stopped.wait, 30)
        assert stopped, "the server is still writing: the client never closed the connection"
    assert not server.hit_limit and server.sent < cap + SLACK, f"the client read {server.sent / MIB:.0f} MiB"
    message = str(caught.value)
    assert not caught.value.retryable
    assert "too large" in message and "\n" not in message and "Traceback" not in message
    return message


@pytest.fixture(params=["auto", "litellm"])
def client(request) -> str:
    return request.param


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC])
async def test_an_endless_sse_line_is_given_up(model, client):
    message = await _too_large(Endless(b"x" * PIECE, head=b"data: {"), model, client)
    assert f"one line of the response passed {MAX_SSE_LINE_BYTES // MIB} MiB" in message


async def test_an_endless_event_is_given_up(client):
    unit = b"data: " + b"x" * (PIECE - 7) + b"\n"
    message = await _too_large(Endless(unit, head=b"event: message_start\n"), ANTHROPIC, client, MAX_SSE_EVENT_BYTES)
    assert "one event of the response" in message


async def test_a_compressed_endless_line_is_measured_inflated():
    """A few KB of gzip inflate to megabytes: the cap counts what the reader would hold."""
    pack = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)

    def unit(_: int) -> bytes:
        return pack.compress(b"x" * MIB) + pack.flush(zlib.Z_SYNC_FLUSH)

    server = Endless(unit, head=pack.compress(b"data: {"), extra_headers={"Content-Encoding": "gzip"})
    message = await _too_large(server, OPENAI, cap=MIB)  # the raw bytes: a thousandth of the inflated
    assert "one line" in message


async def test_a_body_without_end_is_given_up(client):
    server = Endless(b'"' + b"x" * PIECE + b'",\n\n', head=b"[\n", content_type="application/json")
    message = await _too_large(server, OPENAI, client, MAX_RESPONSE_BODY_BYTES)
    assert "the response body" in message


async def test_a_json_body_of_one_endless_line_is_given_up_at_the_line_cap(client):
    server = Endless(b"x" * PIECE, head=b'{"x": "', content_type="application/json")
    message = await _too_large(server, OPENAI, client)
    assert "one line of the response" in message


def _openai_event(delta: dict) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


async def test_a_tool_call_without_end_is_given_up_naming_the_tool(client):
    head = _openai_event({"role": "assistant", "content": ""}) + _openai_event(
        {
            "tool_calls": [
                {"index": 0, "id": "call_1", "type": "function", "function": {"name": "file-write", "arguments": ""}}
            ]
        }
    )
    unit = _openai_event({"tool_calls": [{"index": 0, "function": {"arguments": "x" * 8192}}]})
    message = await _too_large(Endless(unit, head=head), OPENAI, client, MAX_TOOL_ARGUMENTS_CHARS)
    assert "tool call file-write was too large" in message
    assert f"{MAX_TOOL_ARGUMENTS_CHARS // MIB} MiB" in message


async def test_an_anthropic_tool_call_without_end_is_given_up():
    def event(name: str, data: dict) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    head = event(
        "message_start",
        {"type": "message_start", "message": {"id": "m", "role": "assistant", "content": [], "usage": {}}},
    ) + event(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "bash", "input": {}},
        },
    )
    unit = event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "x" * 8192}},
    )
    message = await _too_large(Endless(unit, head=head), ANTHROPIC, cap=MAX_TOOL_ARGUMENTS_CHARS)
    assert "tool call bash was too large" in message


async def test_an_answer_without_end_is_given_up():
    """Short, well-formed events, forever: the answer as a whole has a cap too."""
    head = _openai_event({"role": "assistant", "content": ""})
    message = await _too_large(Endless(_openai_event({"content": "y" * 8192}), head=head), OPENAI, cap=MAX_ANSWER_CHARS)
    assert f"passed {MAX_ANSWER_CHARS // MIB} MiB of text" in message


async def test_the_sse_parser_holds_an_event_to_its_cap_whatever_hands_it_lines():
    from agent.llm.sse import events

    async def lines():
        while True:
            yield "data: " + "x" * PIECE

    with pytest.raises(ResponseTooLarge, match="one event"):
        async for _ in events(lines()):
            pass
