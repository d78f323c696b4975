"""The base protocol's framing: what a server sends is read within bounds, or refused."""

from __future__ import annotations

import asyncio

import pytest

from agent.lsp.framing import MAX_HEADER_BYTES, Closed, FramingError, encode_message, read_message


async def _read(data: bytes, max_bytes: int = 1000) -> dict:
    reader = asyncio.StreamReader(limit=MAX_HEADER_BYTES)
    reader.feed_data(data)
    reader.feed_eof()
    return await read_message(reader, max_bytes)


async def test_a_message_round_trips_with_a_content_type_and_a_stray_line_end():
    framed = encode_message({"jsonrpc": "2.0", "method": "x", "params": {"é": 1}})
    with_type = framed.replace(b"\r\n\r\n", b"\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n")
    assert await _read(b"\r\n" + with_type) == {"jsonrpc": "2.0", "method": "x", "params": {"é": 1}}


@pytest.mark.parametrize(
    "data",
    [
        b"Content-Length: 5000\r\n\r\n{}",  # over the bound: never allocated
        b"Content-Length: x\r\n\r\n{}",
        b"Content-Length: 2\r\n\r\n[]",  # JSON, not an object
        b"Content-Length: 2\r\n\r\n{]",
        b"no colon here\r\n\r\n{}",
        b"\r\n\r\n{}".replace(b"\r\n\r\n", b"X-A: b\r\n\r\n"),  # no length at all
        b"X-Long: " + b"a" * (MAX_HEADER_BYTES + 10) + b"\r\n\r\n",
    ],
)
async def test_what_breaks_the_framing_is_refused(data):
    with pytest.raises(FramingError):
        await _read(data)


async def test_the_end_of_the_stream_is_closed_not_an_error():
    with pytest.raises(Closed):
        await _read(b"")
    with pytest.raises(Closed):
        await _read(b"Content-Length: 10\r\n\r\n{}")  # the body cut short
