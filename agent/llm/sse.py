"""Server-sent events from a byte stream, as the HTML standard defines them.

Why our own: the fast path (agent/llm/fast.py) reads the two providers' streams without the
openai or anthropic SDKs. Comments (`: keep-alive`) are dropped here, so they never count as
progress for the idle watchdog.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


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
    async for line in lines:
        if not line:
            if data:
                yield Event(name or "message", "\n".join(data))
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    if data:
        yield Event(name or "message", "\n".join(data))
