"""One streamed chat completion, with tool calls, usage and cost: on the fast path for
OpenAI-compatible and Anthropic models (agent/llm/fast.py), through litellm for the rest.
Which one is one object per wire protocol (agent/llm/wire.py), picked once per request from
agent/llm/route.py's answer; this module's loop is the same for all of them.

Each protocol maps its failures to agent.llm.errors (through agent/llm/error_map.py). Retries
are the loop's job (it shows a countdown and can be interrupted); this module makes one
attempt and reports what streamed before any failure via `LLMError.partial`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.llm.anthropic_wire import AnthropicWire
from agent.llm.chunks import Chunk, UsagePiece
from agent.llm.error_map import readable as _short
from agent.llm.errors import LLMError, NetworkError, ProviderError, ResponseTooLargeError
from agent.llm.fast import HttpWire
from agent.llm.http import ConnectionPool
from agent.llm.litellm_stream import LitellmWire
from agent.llm.openai_wire import OpenAIWire, dumps, without_nulls
from agent.llm.providers import lookup, provider_of
from agent.llm.reasoning import (
    META_THINKING_BLOCKS,
    ThinkingCollector,
    request_params,
    thinks_in_blocks,
    unsigned_tool_loop,
)
from agent.llm.result import StreamResult
from agent.llm.route import CLIENT_AUTO, Wire, WireName, fast_wire
from agent.llm.server_search import NativeSearch, offered, search_cost, without_server_blocks
from agent.llm.wire import WireCall, WireProtocol
from agent.llm.wire_limits import MAX_ANSWER_CHARS, MAX_TOOL_ARGUMENTS_CHARS, MIB
from agent.process.secrets import remember_secret
from agent.session.models import ToolCall

TextSink = Callable[[str], Awaitable[None] | None]
# One INFO line per request (`--debug` writes it to cairn.log, redacted by the handler).
log = logging.getLogger("agent.llm")


@dataclass
class _CallBuffer:
    id: str = ""
    name: str = ""
    arguments: str = ""


# A stream that sends no content for this long is given up (`llm.stream_idle_timeout`).
DEFAULT_STREAM_IDLE_TIMEOUT = 60.0


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    api_base: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    timeout: float = 600.0
    # Seconds without content (llm.stream_idle_timeout): keep-alive comments do not count.
    idle_timeout: float = DEFAULT_STREAM_IDLE_TIMEOUT
    # The most the reply may generate (litellm sends it as the provider wants it:
    # max_tokens, or max_completion_tokens for OpenAI's reasoning models). None: not sent.
    max_tokens: int | None = None
    # Our count of the request's tokens (for the log line beside what the provider reports).
    estimated_tokens: int | None = None
    # off | minimal | low | medium | high; None: the model's default (agent/llm/reasoning.py).
    reasoning_effort: str | None = None
    # `[models."…"] supports_reasoning`: the model is (or is not) sent the effort whatever
    # litellm's price map says; None: the map decides.
    supports_reasoning: bool | None = None
    # `llm.client`: "auto" (the fast path where it applies, agent/llm/route.py) or "litellm".
    client: str = CLIENT_AUTO
    # The owner's pooled HTTP client for the fast path (the request builder's); None: one
    # made for this request.
    connections: ConnectionPool | None = None
    # `[web] native_search`: the provider's own search where the protocol runs it (agent/llm/server_search.py).
    native_search: NativeSearch | None = None
    _messages_json: str | None = field(default=None, repr=False, compare=False)

    def messages_json(self) -> str:
        """`messages` as JSON, null fields left out (as the openai SDK sends them), encoded
        once: the copy `/context` keeps and the fast path's body share it (encoding a long
        session's messages was the largest cost of its requests). Set `messages` before."""
        if self._messages_json is None:
            self._messages_json = dumps(without_nulls(self.messages))
        return self._messages_json


# litellm parses ~1 ms per chunk; chunks already buffered are iterated without returning to
# the event loop, so a fast stream would freeze the screen for hundreds of ms without this.
STREAM_YIELD_S = 0.05
_EMPTY = "The model returned an empty response (no text and no tool call)."
_EMPTY_AT_LIMIT = "The model stopped at its output limit (no text and no tool call)."


def keys_in_use(model: str, api_key: str | None) -> list[str]:
    """The keys cairn holds for `model`: the one given (flag, CAIRN_API_KEY, config) and the
    provider's own variable (what litellm reads when none is given). They are remembered as
    secrets: redacted wherever they could be written, kept from the model's commands."""
    variables = lookup(provider_of(model)).key_variables
    variable = variables[0] if variables else None
    return [k for k in (api_key, os.environ.get("CAIRN_API_KEY"), os.environ.get(variable) if variable else None) if k]


def _cost(model: str, result: StreamResult) -> float:
    """The request's price from litellm's price map, cache reads and writes at their own prices."""
    from agent.llm.cost_map import request_cost

    if not result.prompt_tokens and not result.completion_tokens:
        return 0.0
    searches = _search_cost(model, result.web_search_requests)
    cost = request_cost(
        model,
        prompt_tokens=result.prompt_tokens or 0,
        completion_tokens=result.completion_tokens or 0,
        cache_read_tokens=result.cache_read_tokens,
        cache_write_tokens=result.cache_write_tokens,
    )
    return (cost.total if cost is not None else 0.0) + searches  # unpriced models (local, custom): no cost shown


def _search_cost(model: str, requests: int) -> float:
    """Server-side searches at the model's per-query price (agent/llm/server_search.py)."""
    if not requests:
        return 0.0
    from agent.llm.cost_map import model_info

    info = model_info(model)
    return search_cost(info.web_search_cost_per_query if info is not None else None, requests)


def _thinking_for(model: str, messages: list[dict[str, Any]], *, sends: bool) -> list[dict[str, Any]]:
    """`messages` with the stored thinking blocks only where they belong: a Claude request
    that thinks gets them back (Anthropic requires a tool loop's signed blocks before its
    tool calls); any other request gets none (providers refuse fields they do not know)."""
    keep = sends and thinks_in_blocks(model)
    if keep or not any(META_THINKING_BLOCKS in m for m in messages):
        return messages
    return [_without_thinking(m) if META_THINKING_BLOCKS in m else m for m in messages]


def _without_thinking(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != META_THINKING_BLOCKS}


async def stream_chat(
    request: ChatRequest,
    on_text: TextSink | None = None,
    into: StreamResult | None = None,
    on_thinking: TextSink | None = None,
) -> StreamResult:
    """Stream one completion. On failure raises LLMError with `.partial` (a StreamResult).

    `into` (optional) is filled as the stream arrives, so a caller that cancels the call
    still has what streamed, half-sent tool calls included. `on_thinking` gets the model's
    reasoning as it streams. The fast path (agent/llm/fast.py) carries OpenAI-compatible and
    Anthropic models, litellm every other; both feed this one loop."""
    for key in keys_in_use(request.model, request.api_key):  # a /model switch may use another
        remember_secret(key)
    result = into if into is not None else StreamResult()
    calls: dict[int, _CallBuffer] = {}
    effort, max_tokens = request_params(
        request.model, request.reasoning_effort, request.max_tokens, request.supports_reasoning
    )
    if effort and thinks_in_blocks(request.model) and unsigned_tool_loop(request.messages):
        effort = {}  # Anthropic would refuse the request (see unsigned_tool_loop)
    messages = _thinking_for(request.model, request.messages, sends=bool(effort))
    thinking = ThinkingCollector()
    idle = request.idle_timeout
    started = time.monotonic()
    watchdog: asyncio.Timeout | None = None
    protocol = protocol_for(request)
    tools, server_tools = offered(request.tools, request.native_search, runs_server_search=protocol.runs_server_search)
    if not server_tools:  # the stored search blocks go back only beside the search tool
        messages = without_server_blocks(messages)
    try:
        stream = protocol.open(_call(request, messages, effort, max_tokens, tools, server_tools))
        # The idle watchdog: pushed back only by content, so a server that sends nothing
        # but keep-alive comments (which the SSE parser drops unseen) or empty chunks,
        # before or after the first token, is given up after `idle` seconds.
        async with asyncio.timeout(idle) as watchdog:
            loop = asyncio.get_running_loop()
            slack = min(1.0, idle / 10)  # rescheduling on every chunk would cost a timer each
            clock = time.perf_counter
            since_yield = clock()
            # Closed as soon as the loop leaves, however it leaves: an interrupt closes the
            # connection then, so the provider stops generating (and billing) at once.
            received = 0  # characters of text, reasoning and tool arguments so far
            async with contextlib.aclosing(stream.chunks()) as chunks:
                async for chunk in chunks:
                    if clock() - since_yield > STREAM_YIELD_S:
                        await asyncio.sleep(0)  # let the screen draw: buffered chunks never wait on the loop
                        since_yield = clock()
                    received += _chars(chunk, calls)
                    if received > MAX_ANSWER_CHARS:
                        raise ResponseTooLargeError(
                            f"The response from {request.model} was too large: it passed "
                            f"{MAX_ANSWER_CHARS // MIB} MiB of text, so cairn stopped reading it."
                        )
                    if chunk.usage is not None:
                        _add_usage(result, chunk.usage)
                    progressed = await _take(chunk, result, calls, thinking, on_text, on_thinking)
                    if progressed:
                        deadline = loop.time() + idle
                        if deadline - (watchdog.when() or 0.0) > slack:
                            watchdog.reschedule(deadline)
        if stream.unfinished and (stream.always_finishes or any(_broken_json(b.arguments) for b in calls.values())):
            # Cut: a proxy or server gave up mid-answer. Held to the end marker when the
            # protocol always sends one; otherwise only a half-sent tool call tells.
            if not result.content and not calls:
                raise ProviderError(_EMPTY, retryable=True)
            raise NetworkError(
                f"The response stream from {request.model} ended before the model finished (no finish reason)."
            )
    except BaseException as exc:
        result.partial_tool_calls = [vars(b) for _, b in sorted(calls.items())]
        _log_request(request, result, started, failed=exc)
        if isinstance(exc, TimeoutError) and watchdog is not None and watchdog.expired():
            err: LLMError = NetworkError(
                f"The response stream from {request.model} sent no content for {idle:g} s "
                "(only keep-alives, or nothing at all); gave up waiting."
            )
            err.partial = result
            raise err from None
        if isinstance(exc, Exception):
            err = protocol.map_error(exc, request.model, request.api_base)
            err.partial = result
            if err is exc:
                raise
            raise err from exc
        raise
    result.tool_calls = [
        ToolCall(id=b.id or f"call_{i}", name=b.name, arguments=b.arguments)
        for i, b in sorted(calls.items())
        if b.name or b.id
    ]
    if not result.tool_calls and not result.content.strip():
        err = ProviderError(_EMPTY_AT_LIMIT if result.finish_reason == "length" else _EMPTY, retryable=True)
        err.partial = result
        _log_request(request, result, started, failed=err)
        raise err
    result.cost = _cost(request.model, result)
    _log_request(request, result, started)
    return result


# The fast path's protocol objects, by the wire agent/llm/route.py chose.
FAST_PROTOCOLS: dict[WireName, type[HttpWire]] = {"openai": OpenAIWire, "anthropic": AnthropicWire}


def protocol_for(request: ChatRequest) -> WireProtocol:
    """The request's wire protocol: the fast path's when route.py gives it one, else litellm."""
    wire: Wire | None = fast_wire(request.model, request.api_base, request.client)
    return LitellmWire() if wire is None else FAST_PROTOCOLS[wire.protocol](wire)


def _call(
    request: ChatRequest,
    messages: list[dict[str, Any]],
    effort: dict[str, Any],
    max_tokens: int | None,
    tools: list[dict[str, Any]],
    server_tools: list[dict[str, Any]],
) -> WireCall:
    return WireCall(
        model=request.model,
        messages=messages,
        tools=tools,
        api_base=request.api_base,
        api_key=request.api_key,
        temperature=request.temperature,
        max_tokens=max_tokens,
        effort=effort,
        timeout=request.timeout,
        connections=request.connections,
        # The messages as encoded once for the request's copy, when they go out unchanged.
        messages_json=request.messages_json if messages is request.messages else None,
        server_tools=server_tools,
    )


def _add_usage(result: StreamResult, usage: UsagePiece) -> None:
    result.prompt_tokens = usage.prompt or result.prompt_tokens
    result.completion_tokens = usage.completion or result.completion_tokens
    result.cache_read_tokens = usage.cache_read or result.cache_read_tokens
    result.cache_write_tokens = usage.cache_write or result.cache_write_tokens
    result.reasoning_tokens = usage.reasoning or result.reasoning_tokens
    result.web_search_requests = usage.web_searches or result.web_search_requests


async def _take(
    chunk: Chunk,
    result: StreamResult,
    calls: dict[int, _CallBuffer],
    thinking: ThinkingCollector,
    on_text: TextSink | None,
    on_thinking: TextSink | None,
) -> bool:
    """Adds `chunk` to `result`; True when it carried content (what the idle watchdog counts)."""
    progressed = False
    if chunk.finish_reason:
        result.finish_reason = chunk.finish_reason
        progressed = True
    if chunk.reasoning:
        progressed = True  # a thinking model's reasoning is progress too
        result.thinking += chunk.reasoning
        if on_thinking is not None:
            maybe = on_thinking(chunk.reasoning)
            if inspect.isawaitable(maybe):
                await maybe
    if chunk.thinking_blocks:
        progressed = True
        thinking.feed(chunk.thinking_blocks)
        result.thinking_blocks = thinking.blocks
    if chunk.server_blocks:
        progressed = True
        result.server_blocks += chunk.server_blocks
    if chunk.text:
        progressed = True
        result.content += chunk.text
        if on_text is not None:
            maybe = on_text(chunk.text)
            if inspect.isawaitable(maybe):
                await maybe
    for piece in chunk.calls:
        progressed = True
        index = piece.index if piece.index is not None else len(calls)
        buf = calls.setdefault(index, _CallBuffer())
        if piece.id:
            buf.id = piece.id
        if piece.name:
            buf.name = piece.name
        if piece.arguments:
            buf.arguments += piece.arguments
            if len(buf.arguments) > MAX_TOOL_ARGUMENTS_CHARS:
                raise ResponseTooLargeError(
                    f"The model's tool call {buf.name or '(unnamed)'} was too large: its arguments passed "
                    f"{MAX_TOOL_ARGUMENTS_CHARS // MIB} MiB, so cairn stopped reading the response. "
                    "Ask for the work in smaller pieces (a large file written in parts)."
                )
    return progressed


def _chars(chunk: Chunk, calls: dict[int, _CallBuffer]) -> int:
    """What `chunk` adds to the answer's size (agent/llm/wire_limits.py's MAX_ANSWER_CHARS):
    everything kept of it, so that no field a server can repeat without end escapes the cap
    (tool calls' names and ids, each at a new index; thinking blocks' signatures and
    redacted data, a new block each)."""
    size = len(chunk.text) + len(chunk.reasoning)
    for piece in chunk.calls:
        size += len(piece.arguments)
        held = calls.get(piece.index) if piece.index is not None else None
        if held is None:  # a new call: its buffer is kept too
            size += 1 + len(piece.name or "") + len(piece.id or "")
        else:  # a name or id repeated with every piece (some routes do) is held once
            size += (len(piece.name) if piece.name and piece.name != held.name else 0) + (
                len(piece.id) if piece.id and piece.id != held.id else 0
            )
    size += sum(len(json.dumps(block)) for block in chunk.server_blocks)
    for block in chunk.thinking_blocks:
        kept = block if isinstance(block, dict) else getattr(block, "__dict__", {})
        size += 1 + sum(len(v) for k, v in kept.items() if isinstance(v, str) and k != "thinking")
        if not chunk.reasoning:  # the text of a block is usually the chunk's reasoning, counted above
            size += len(str(kept.get("thinking") or ""))
    return size


def _log_request(
    request: ChatRequest, result: StreamResult, started: float, failed: BaseException | None = None
) -> None:
    """The request's line in the debug log: what was sent, what the provider reported back."""
    if not log.isEnabledFor(logging.INFO):
        return

    def known(value: Any) -> str:
        return "?" if value is None else str(value)

    outcome = ""
    if failed is not None:
        outcome = f" failed={type(failed).__name__}" + (f": {_short(failed)}" if isinstance(failed, Exception) else "")
    log.info(
        "request model=%s messages=%d tools=%d max_tokens=%s tokens_estimated=%s prompt_tokens=%s "
        "completion_tokens=%s cache_read_tokens=%d cache_write_tokens=%d duration=%.2fs finish_reason=%s "
        "cost=%.6f%s",
        request.model,
        len(request.messages),
        len(request.tools),
        known(request.max_tokens),
        known(request.estimated_tokens),
        known(result.prompt_tokens),
        known(result.completion_tokens),
        result.cache_read_tokens,
        result.cache_write_tokens,
        time.monotonic() - started,
        known(result.finish_reason),
        result.cost,
        outcome,
    )


def _broken_json(arguments: str) -> bool:
    if not arguments.strip():
        return False
    try:
        json.loads(arguments)
    except ValueError:
        return True
    return False
