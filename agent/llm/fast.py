"""The fast path: a request on one of the two wire protocols cairn speaks itself
(agent/llm/route.py says which), streamed as Chunks for agent/llm/client.py's loop.

`HttpWire` is what the two protocols share (agent/llm/openai_wire.py, anthropic_wire.py
each give their headers, body and event reader): the key the request may carry, the pooled
POST, the server-sent events read until the answer's end.

No SDK and no litellm on the way: the first request does not wait for `import litellm`
(~2 s of CPU), and a long session's requests are not walked message by message by a
client library (~0.3 ms a message, each request).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from abc import abstractmethod
from collections.abc import AsyncGenerator
from typing import Protocol

from agent.llm.chunks import Chunk
from agent.llm.error_map import map_exception
from agent.llm.errors import AuthError, LLMError
from agent.llm.http import ConnectionPool, stream_lines
from agent.llm.keys import choose_key
from agent.llm.route import Wire
from agent.llm.sse import events
from agent.llm.wire import WireCall, WireProtocol

# Seconds the body may take to end after the answer's last event before the connection is
# dropped instead of reused.
DRAIN_S = 1.0


class EventReader(Protocol):
    """Reads one response's server-sent events in order, into Chunks (usage included)."""

    @property
    def done(self) -> bool:
        """The answer's last event came: nothing after it is read."""
        ...

    @property
    def finished(self) -> bool:
        """The answer ended as its protocol always ends one (a finish reason, message_stop)."""
        ...

    def parse(self, event: str, data: str) -> Chunk | None:
        """One event as a Chunk; None: nothing for the answer in it. Raises StreamBroken for
        data that is not the protocol's or an error the server sent inside the stream."""
        ...


class HttpWire(WireProtocol):
    """A protocol the fast path speaks: posted with httpx, read as server-sent events."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    @abstractmethod
    def headers(self, api_key: str) -> dict[str, str]: ...

    @abstractmethod
    def body(self, call: WireCall) -> bytes:
        """The JSON body."""

    @abstractmethod
    def reader(self) -> EventReader:
        """A reader for one response."""

    def open(self, call: WireCall) -> FastStream:
        # A key goes only where the user sent it (agent/llm/keys.py).
        choice = choose_key(self.wire.provider, api_base=call.api_base, api_key=call.api_key, environ=os.environ)
        if not choice.key:
            raise AuthError(choice.missing_key_message(call.model, call.api_base))
        return FastStream(self, call.connections, choice.key, self.body(call), call.timeout)

    def map_error(self, exc: Exception, model: str, api_base: str | None) -> LLMError:
        return map_exception(exc, model, api_base, provider=self.wire.provider)


class FastStream:
    """One request's chunks; after the iteration, `unfinished` says whether the stream ended
    without the end its protocol always sends (a proxy or server gave up mid-answer)."""

    always_finishes = True  # both protocols end every answer with a finish reason / message_stop

    def __init__(
        self,
        protocol: HttpWire,
        pool: ConnectionPool | None,
        api_key: str,
        content: bytes,
        timeout: float,
    ) -> None:
        self.protocol = protocol
        self.pool = pool
        self.api_key = api_key
        self.content = content  # the JSON body
        self.timeout = timeout
        self._finished = False

    @property
    def unfinished(self) -> bool:
        return not self._finished

    async def chunks(self) -> AsyncGenerator[Chunk, None]:
        protocol = self.protocol
        lines = stream_lines(self.pool, protocol.wire.url, protocol.headers(self.api_key), self.content, self.timeout)
        reader = protocol.reader()
        async with contextlib.aclosing(lines):
            async for event in events(lines):
                chunk = reader.parse(event.name, event.data)
                self._finished = reader.finished
                if reader.done:
                    await _drain(lines)
                    return
                if chunk is not None:
                    yield chunk


async def _drain(lines: AsyncGenerator[str, None]) -> None:
    """Read the body to its end after the answer's last event (only the closing chunk is
    left), so the connection goes back to the pool for the next request instead of being
    closed; a server that holds the body open after it is not waited on for long."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            async for _ in lines:
                pass
