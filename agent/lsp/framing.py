"""LSP's base protocol: JSON-RPC messages framed by a `Content-Length` header over a server's
stdio. Written here (it is small) so every byte a server sends passes through bounds cairn
chose: a header that never ends or a body announced at gigabytes is an error, not a hang
or an allocation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

# A header block is a line or two (`Content-Length`, maybe `Content-Type`).
MAX_HEADER_BYTES = 8 * 1024
# Diagnostics of a big file, a long hover: megabytes at most. More is a broken or hostile server.
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
# The stream reader's line limit: a header line longer than this fails the read.
READER_LIMIT = MAX_HEADER_BYTES


class FramingError(Exception):
    """The server broke the framing (or sent no JSON object): the connection cannot go on."""


class Closed(Exception):
    """The server closed its output."""


def encode_message(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES) -> dict[str, Any]:
    """The next message. Raises Closed at the end of the stream, FramingError on anything else
    than a well-framed JSON object within the bounds."""
    length: int | None = None
    header_bytes = 0
    seen_header = False
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            raise Closed() from exc
        except asyncio.LimitOverrunError as exc:
            raise FramingError("a header line over the limit") from exc
        header_bytes += len(line)
        if header_bytes > MAX_HEADER_BYTES:
            raise FramingError("a header over the limit")
        if line in (b"\r\n", b"\n"):
            if not seen_header:  # a stray line end between messages
                continue
            break
        seen_header = True
        name, sep, value = line.decode("ascii", "replace").partition(":")
        if not sep:
            raise FramingError("a header line without a colon")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError as exc:
                raise FramingError("a Content-Length that is no number") from exc
    if length is None or not 0 <= length <= max_bytes:
        raise FramingError(f"a message of {length} bytes (at most {max_bytes})")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise Closed() from exc
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise FramingError("a body that is not JSON") from exc
    if not isinstance(message, dict):
        raise FramingError("a body that is not a JSON object")
    return message
