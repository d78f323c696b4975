"""One object per wire format: what agent/llm/client.py's loop asks of a protocol.

Each way cairn talks to a model is one `WireProtocol`: OpenAI's chat completions
(agent/llm/openai_wire.py) and Anthropic's Messages API (agent/llm/anthropic_wire.py), spoken
by the fast path (agent/llm/fast.py), and litellm for every other provider
(agent/llm/litellm_stream.py). A protocol owns its request (body, headers, the key it may
carry), its stream reader and the usage it reads off it, and how its failures read to the
user; the loop above it (idle watchdog, size caps, callbacks, partial answers) is one for all.
The object is picked once per request from agent/llm/route.py's answer, so no module branches
on which protocol it is speaking.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent.llm.chunks import Chunk
    from agent.llm.errors import LLMError
    from agent.llm.http import ConnectionPool


class ChunkStream(Protocol):
    """One request's answer as Chunks."""

    @property
    def always_finishes(self) -> bool:
        """The protocol ends every answer with a finish reason or end event: one without was cut."""
        ...

    @property
    def unfinished(self) -> bool:
        """After the iteration: the stream ended without its finish (a proxy or server gave up)."""
        ...

    def chunks(self) -> AsyncGenerator[Chunk, None]:
        """Closed by the loop however it leaves, so an interrupt ends the connection at once."""
        ...


@dataclass(frozen=True)
class WireCall:
    """One request as every protocol takes it: the model string as the user wrote it, the
    messages as they go out (thinking blocks already kept or dropped), the reasoning
    parameters agent/llm/reasoning.py chose."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    api_base: str | None
    api_key: str | None
    temperature: float | None
    max_tokens: int | None
    effort: dict[str, Any]  # litellm's parameters for the effort ({"reasoning_effort": …}); {}: none
    timeout: float
    connections: ConnectionPool | None  # the owner's pooled HTTP client; None: one for this request
    # `messages` as JSON, encoded once for the request's copy, when they go out unchanged
    # (agent/llm/client.py's ChatRequest.messages_json); None: they changed.
    messages_json: Callable[[], str] | None = None
    # Provider-run tools in their own form (Anthropic's web search, agent/llm/server_search.py).
    server_tools: list[dict[str, Any]] = field(default_factory=list)


class WireProtocol(ABC):
    # Whether the provider runs the server-side web search itself (agent/llm/server_search.py).
    runs_server_search: bool = False

    @abstractmethod
    def open(self, call: WireCall) -> ChunkStream:
        """The request, ready to stream; raises AuthError when it may carry no key."""

    @abstractmethod
    def map_error(self, exc: Exception, model: str, api_base: str | None) -> LLMError:
        """A failure of this protocol's request as a typed error, in the user's words."""
