"""What one streamed chunk carried, whatever client read it.

The litellm path (agent/llm/litellm_stream.py) and the fast path's two wire protocols
(agent/llm/openai_wire.py, agent/llm/anthropic_wire.py) all turn their provider's stream into
these, so the one loop in agent/llm/client.py handles the idle watchdog, callbacks, partial
tool calls, cut streams and errors the same way for every provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class CallPiece:
    """A fragment of a tool call: the first names it, later ones add to its arguments."""

    index: int | None
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(slots=True)
class UsagePiece:
    """Token counts as reported so far; None: not in this chunk. `prompt` counts the whole
    prompt, cache reads and writes included (as litellm normalises every provider)."""

    prompt: int | None = None
    completion: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    web_searches: int | None = None  # Anthropic's server-side searches (agent/llm/server_search.py)


@dataclass(slots=True)
class Chunk:
    text: str = ""
    reasoning: str = ""  # reasoning text a model streams beside its answer
    thinking_blocks: list[dict[str, Any]] = field(default_factory=list)  # Claude's, as deltas
    server_blocks: list[dict[str, Any]] = field(default_factory=list)  # Claude's server search, each whole
    calls: list[CallPiece] = field(default_factory=list)
    finish_reason: str | None = None
    usage: UsagePiece | None = None
