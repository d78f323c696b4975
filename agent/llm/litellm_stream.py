"""A request through litellm (every provider the fast path does not speak), its stream as
Chunks for agent/llm/client.py's loop: `LitellmWire`, the third wire protocol object
(agent/llm/wire.py), whose wire is whatever litellm speaks to the provider."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import Any

from agent.llm.caching import cache_tokens
from agent.llm.chunks import CallPiece, Chunk, UsagePiece
from agent.llm.error_map import litellm_provider, map_exception
from agent.llm.errors import LLMError
from agent.llm.providers import lookup
from agent.llm.wire import WireCall, WireProtocol

# The one attribute of litellm's stream wrapper cairn reads (see `LitellmStream.cut`).
STREAM_FINISH_REASON_ATTRIBUTE = "received_finish_reason"


class LitellmWire(WireProtocol):
    def open(self, call: WireCall) -> LitellmStream:
        kwargs: dict[str, Any] = dict(
            model=call.model,
            messages=call.messages,
            stream=True,
            stream_options={"include_usage": True},
            timeout=call.timeout,
            num_retries=0,
            max_retries=0,
        )
        if call.tools:
            kwargs["tools"] = call.tools
        if call.api_base:
            kwargs["api_base"] = call.api_base
        if call.api_key:
            kwargs["api_key"] = call.api_key
        if call.temperature is not None:
            kwargs["temperature"] = call.temperature
        if call.max_tokens is not None:
            kwargs["max_tokens"] = call.max_tokens
        kwargs.update(call.effort)
        return LitellmStream(kwargs)

    def map_error(self, exc: Exception, model: str, api_base: str | None) -> LLMError:
        return map_exception(exc, model, api_base)  # the provider litellm routes it to


class LitellmStream:
    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self._stream: Any = None

    @property
    def unfinished(self) -> bool:
        """The stream ended without a finish reason. litellm then makes up finish_reason="stop"
        on the last chunk, so only its stream wrapper's `received_finish_reason` tells (not a
        documented name: litellm is pinned exactly for it, tests/llm/test_litellm_guard.py
        checks it, README "Dependencies" says so)."""
        return getattr(self._stream, STREAM_FINISH_REASON_ATTRIBUTE, "unknown") is None

    @property
    def always_finishes(self) -> bool:
        """Only providers known to always send a finish reason are held to it."""
        return lookup(self.provider()).always_finishes

    def provider(self) -> str:
        """The provider litellm routes the model to ("gpt-4o" → openai), from its public resolver."""
        from agent.llm.offline import import_litellm

        return litellm_provider(import_litellm(), self.kwargs["model"], self.kwargs.get("api_base"))

    def request_kwargs(self) -> dict[str, Any]:
        """`acompletion`'s arguments as sent: with the client that follows no redirect
        (agent/llm/litellm_http.py), and a key only where the user sent it (agent/llm/keys.py):
        litellm reads a provider's variable itself when given no key, so where that key may not
        go it is given one that authenticates nowhere, or told the key is missing."""
        from agent.llm.errors import AuthError
        from agent.llm.keys import WITHHELD_KEY, choose_key
        from agent.llm.litellm_http import client_argument
        from agent.llm.offline import import_litellm

        provider = self.provider()
        kwargs = {**self.kwargs, **client_argument(import_litellm(), provider)}
        api_base = kwargs.get("api_base")
        choice = choose_key(provider, api_base=api_base, api_key=kwargs.get("api_key"), environ=os.environ)
        if not choice.own_key_allowed and choice.key is None:
            if choice.withheld is not None:
                raise AuthError(choice.missing_key_message(kwargs["model"], api_base))
            kwargs["api_key"] = WITHHELD_KEY
        return kwargs

    async def chunks(self) -> AsyncGenerator[Chunk, None]:
        from agent.llm.offline import import_litellm

        self._stream = await import_litellm().acompletion(**self.request_kwargs())
        try:
            async for raw in self._stream:
                yield convert(raw)
        finally:
            # However the reading stopped (an error, an interrupt, a cap): the connection is
            # closed now, not when the stream is collected, so the server stops sending.
            close = getattr(self._stream, "aclose", None)
            if close is not None:
                await close()


def convert(raw: Any) -> Chunk:
    """litellm's ModelResponseStream (attributes, not dicts) as a Chunk."""
    chunk = Chunk()
    usage = getattr(raw, "usage", None)
    if usage:
        read, written = cache_tokens(usage)
        details = getattr(usage, "completion_tokens_details", None)
        chunk.usage = UsagePiece(
            prompt=getattr(usage, "prompt_tokens", None) or None,
            completion=getattr(usage, "completion_tokens", None) or None,
            cache_read=read or None,
            cache_write=written or None,
            reasoning=getattr(details, "reasoning_tokens", None) or None,
        )
    for choice in getattr(raw, "choices", None) or []:
        if choice.finish_reason:
            chunk.finish_reason = choice.finish_reason
        delta = getattr(choice, "delta", None)
        if delta is None:
            continue
        chunk.reasoning += getattr(delta, "reasoning_content", None) or ""
        blocks = getattr(delta, "thinking_blocks", None)
        if blocks:
            chunk.thinking_blocks += [b if isinstance(b, dict) else getattr(b, "__dict__", {}) for b in blocks]
        chunk.text += getattr(delta, "content", None) or ""
        for tc in getattr(delta, "tool_calls", None) or []:
            fn = getattr(tc, "function", None)
            chunk.calls.append(
                CallPiece(
                    index=getattr(tc, "index", None),
                    id=getattr(tc, "id", None),
                    name=getattr(fn, "name", None) if fn is not None else None,
                    arguments=(getattr(fn, "arguments", None) or "") if fn is not None else "",
                )
            )
    return chunk
