"""Server-sent events from a byte stream, as the HTML standard defines them.

Why our own: the fast path (agent/llm/fast.py) reads the two providers' streams without the
openai or anthropic SDKs. Comments (`: keep-alive`) are dropped here, so they never count as
progress for the idle watchdog. An event's data is held to MAX_SSE_EVENT_BYTES here as well as
on the wire (agent/llm/wire_limits.py), whatever hands the lines in.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from agent.llm.http import StreamBroken
from agent.llm.wire_limits import MAX_SSE_EVENT_BYTES, too_large


@dataclass(slots=True)
class Event:
    name: str  # "message" when the server named none
    data: str


async def events(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    """Events from `lines` (without their line endings); one left unterminated at the end
    of the stream is still delivered, as a server that closes right after its last `data:`
    line means it."""
    name = ""
    data: list[str] = []
    size = 0
    async for line in lines:
        if not line:
            if data:
                yield Event(name or "message", "\n".join(data))
            name, data, size = "", [], 0
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
            size += len(value) + 1
            if size > MAX_SSE_EVENT_BYTES:
                raise too_large("one event of the response (lines without a blank line between)", MAX_SSE_EVENT_BYTES)
        elif field == "event":
            name = value
    if data:
        yield Event(name or "message", "\n".join(data))


def json_object(data: str) -> dict[str, Any]:
    """An event's data as the JSON object both providers send; anything else broke the stream."""
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise StreamBroken(f"malformed data: {exc}") from None
    if not isinstance(payload, dict):
        raise StreamBroken(f"malformed data: {data[:80]}")
    return payload


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a field a server left out or mistyped)."""
    return value if isinstance(value, dict) else {}
