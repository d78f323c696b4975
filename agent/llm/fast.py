"""The fast path: a request on one of the two wire protocols cairn speaks itself
(agent/llm/route.py says which), streamed as Chunks for agent/llm/client.py's loop.

No SDK and no litellm on the way: the first request does not wait for `import litellm`
(~2 s of CPU), and a long session's requests are not walked message by message by a
client library (~0.3 ms a message, each request).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

from agent.llm import anthropic_wire, openai_wire
from agent.llm.chunks import Chunk
from agent.llm.http import ConnectionPool, stream_lines
from agent.llm.route import Wire
from agent.llm.sse import events


class FastStream:
    """One request's chunks; after the iteration, `unfinished` says whether the stream ended
    without the end its protocol always sends (a proxy or server gave up mid-answer)."""

    always_finishes = True  # both protocols end every answer with a finish reason / message_stop

    def __init__(
        self,
        wire: Wire,
        pool: ConnectionPool | None,
        api_key: str | None,
        body: dict[str, Any],
        timeout: float,
    ) -> None:
        self.wire = wire
        self.pool = pool
        self.api_key = api_key
        self.body = body
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
        lines = stream_lines(self.pool, self.wire.url, self._headers(), self.body, self.timeout)
        async with contextlib.aclosing(lines):
            if self.wire.protocol == "anthropic":
                state = anthropic_wire.StreamState()
                async for event in events(lines):
                    chunk = state.parse(event.name, event.data)
                    if state.stopped:
                        self._finished = True
                        return
                    if chunk is not None:
                        yield chunk
            else:
                async for event in events(lines):
                    chunk = openai_wire.parse(event.data)
                    if chunk is None:
                        return  # [DONE]
                    if chunk.finish_reason:
                        self._finished = True
                    yield chunk


def request_for(
    wire: Wire,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    *,
    max_tokens: int | None,
    temperature: float | None,
    effort: str | None,
) -> dict[str, Any]:
    build = anthropic_wire.request_body if wire.protocol == "anthropic" else openai_wire.request_body
    return build(wire.model, messages, tools, max_tokens=max_tokens, temperature=temperature, effort=effort)
