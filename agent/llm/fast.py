"""The fast path: a request on one of the two wire protocols cairn speaks itself
(agent/llm/route.py says which), streamed as Chunks for agent/llm/client.py's loop.

No SDK and no litellm on the way: the first request does not wait for `import litellm`
(~2 s of CPU), and a long session's requests are not walked message by message by a
client library (~0.3 ms a message, each request).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any

from agent.llm import anthropic_wire, openai_wire
from agent.llm.chunks import Chunk
from agent.llm.http import ConnectionPool, stream_lines
from agent.llm.route import Wire
from agent.llm.sse import events

# Seconds the body may take to end after the answer's last event before the connection is
# dropped instead of reused.
DRAIN_S = 1.0


class FastStream:
    """One request's chunks; after the iteration, `unfinished` says whether the stream ended
    without the end its protocol always sends (a proxy or server gave up mid-answer)."""

    always_finishes = True  # both protocols end every answer with a finish reason / message_stop

    def __init__(
        self,
        wire: Wire,
        pool: ConnectionPool | None,
        api_key: str | None,
        content: bytes,
        timeout: float,
    ) -> None:
        self.wire = wire
        self.pool = pool
        self.api_key = api_key
        self.content = content  # the JSON body
        self.timeout = timeout
        self._finished = False  # a finish reason (OpenAI) or message_stop (Anthropic) arrived

    @property
    def unfinished(self) -> bool:
        return not self._finished

    def _headers(self) -> dict[str, str]:
        key = self.api_key or ""
        if self.wire.protocol == "anthropic":
            return anthropic_wire.headers(key)
        return {"authorization": f"Bearer {key}", "content-type": "application/json"}

    async def chunks(self) -> AsyncGenerator[Chunk, None]:
        lines = stream_lines(self.pool, self.wire.url, self._headers(), self.content, self.timeout)
        async with contextlib.aclosing(lines):
            if self.wire.protocol == "anthropic":
                state = anthropic_wire.StreamState()
                async for event in events(lines):
                    chunk = state.parse(event.name, event.data)
                    if state.stopped:
                        self._finished = True
                        await _drain(lines)
                        return
                    if chunk is not None:
                        yield chunk
            else:
                async for event in events(lines):
                    chunk = openai_wire.parse(event.data)
                    if chunk is None:  # [DONE]
                        await _drain(lines)
                        return
                    if chunk.finish_reason:
                        self._finished = True
                    yield chunk


async def _drain(lines: AsyncGenerator[str, None]) -> None:
    """Read the body to its end after the answer's last event (only the closing chunk is
    left), so the connection goes back to the pool for the next request instead of being
    closed; a server that holds the body open after it is not waited on for long."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            async for _ in lines:
                pass


def request_for(
    wire: Wire,
    messages: list[dict[str, Any]],
    messages_json: str | None,
    tools: list[dict[str, Any]],
    *,
    max_tokens: int | None,
    temperature: float | None,
    effort: str | None,
) -> bytes:
    """The JSON body. `messages_json`: `messages` already encoded (OpenAI's protocol sends
    them as they are), or None."""
    if wire.protocol == "anthropic":
        body = anthropic_wire.request_body(
            wire.model, messages, tools, max_tokens=max_tokens, temperature=temperature, effort=effort
        )
        return openai_wire.dumps(body).encode()
    body = openai_wire.request_body(wire.model, tools, max_tokens=max_tokens, temperature=temperature, effort=effort)
    if messages_json is None:
        messages_json = openai_wire.dumps(openai_wire.without_nulls(messages))
    return openai_wire.encode(body, messages_json)
