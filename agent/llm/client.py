"""One streamed chat completion through litellm, with tool calls, usage and cost.

Provider exceptions are mapped to agent.llm.errors here and nowhere else. Retries are
the loop's job (it shows a countdown and can be interrupted); this module makes one
attempt and reports what streamed before any failure via `LLMError.partial`.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.llm.caching import cache_tokens
from agent.llm.errors import (
    AuthError,
    BadRequestError,
    ContextTooLongError,
    LLMError,
    NetworkError,
    ProviderError,
    QuotaError,
    RateLimitError,
)
from agent.runtime.secrets import redact_secrets, remember_secret
from agent.session.models import ToolCall

TextSink = Callable[[str], Awaitable[None] | None]
# One INFO line per request (`--debug` writes it to cairn.log, redacted by the handler).
log = logging.getLogger("agent.llm")

# Which variable to set, named in auth errors, by litellm provider prefix.
KEY_VARIABLE = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "groq": "GROQ_API_KEY",
    "xai": "XAI_API_KEY",
}


@dataclass
class StreamResult:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None  # as litellm normalises it: cache reads and writes included
    completion_tokens: int | None = None
    cache_read_tokens: int = 0  # of the prompt, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of the prompt, written to it (billed above the input price)
    cost: float = 0.0
    # Tool calls whose arguments were still streaming when the stream stopped.
    partial_tool_calls: list[dict[str, Any]] = field(default_factory=list)


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


def _provider(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else "openai"


def _retry_after(exc: Exception) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date), if the provider sent one."""
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    ):
        value = headers.get("retry-after") if headers else None
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except (TypeError, ValueError):
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            return None
    return None


# "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached" → the last part.
_NOISE = re.compile(r"^(?:litellm\.\w+|[A-Z]\w*(?:Error|Exception)|Timeout Error)(?::| -)\s*")
# "<TransferEncodingError: 400, message='…'>" (an exception's repr inside a message) → its name.
_REPR = re.compile(r"<(\w+): [^<>]*>")
# What the openai SDK (and litellm's own checks) say when no key was given at all.
_MISSING_KEY = re.compile(
    r"missing credentials|api_key client option must be set|missing \w* ?api key"
    r"|no api key|api key (?:is )?(?:missing|not set|required)",
    re.IGNORECASE,
)
# litellm parses ~1 ms per chunk; chunks already buffered are iterated without returning to
# the event loop, so a fast stream would freeze the screen for hundreds of ms without this.
STREAM_YIELD_S = 0.05
_EMPTY = "The model returned an empty response (no text and no tool call)."
_EMPTY_AT_LIMIT = "The model stopped at its output limit (no text and no tool call)."
_HTML = re.compile(r"<(?:html|body|head|title|!doctype)\b", re.IGNORECASE)
# A 429 that is about billing, not pace (OpenAI's "insufficient_quota").
_NO_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota|credit balance is too low", re.IGNORECASE)
# json's messages for an SSE event that is not JSON.
_BAD_JSON = re.compile(r"^(?:Expecting |Unterminated string|Extra data|Invalid control character|Invalid \\escape)")
# Providers whose streams always end with a finish reason: a stream without one was cut.
_FINISH_REASON_PROVIDERS = {"openai", "azure"}
# The one attribute of litellm's stream wrapper cairn reads (see `_ended_early`).
STREAM_FINISH_REASON_ATTRIBUTE = "received_finish_reason"


def _short(exc: Exception) -> str:
    """The provider's own words, made readable: every message a provider sends reaches the
    user and the database through here, so the key (an error body may echo it, a proxy may
    quote the Authorization header) and other known secrets are redacted first."""
    raw = redact_secrets(str(exc).strip())
    if _HTML.search(raw):  # a proxy's error page: its title (or its text), not its markup
        title = re.search(r"<title[^>]*>(.*?)</title>", raw, re.IGNORECASE | re.DOTALL)
        raw = " ".join(re.sub(r"<[^>]*>", " ", title.group(1) if title else raw).split())
    lines = raw.splitlines()
    text = lines[0] if lines else type(exc).__name__
    while True:
        cleaned = _NOISE.sub("", text, count=1)
        if cleaned == text or not cleaned:
            break
        text = cleaned
    return _REPR.sub(r"\1", text)[:400]


def _key_variable(model: str) -> str:
    return KEY_VARIABLE.get(_provider(model), "the provider's API key variable")


def keys_in_use(model: str, api_key: str | None) -> list[str]:
    """The keys cairn holds for `model`: the one given (flag, CAIRN_API_KEY, config) and the
    provider's own variable (what litellm reads when none is given). They are remembered as
    secrets: redacted wherever they could be written, kept from the model's commands."""
    variable = KEY_VARIABLE.get(_provider(model))
    return [k for k in (api_key, os.environ.get("CAIRN_API_KEY"), os.environ.get(variable) if variable else None) if k]


def map_exception(exc: Exception, model: str, api_base: str | None = None) -> LLMError:
    """litellm/openai/httpx exception → our typed error with a readable message."""
    import litellm
    from litellm.exceptions import MidStreamFallbackError

    if isinstance(exc, LLMError):
        return exc
    status = getattr(exc, "status_code", None)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (401, 403):
        return AuthError(
            f"Authentication failed for {model}: check your API key (set {_key_variable(model)}, or pass "
            f"--api-key). Provider said: {_short(exc)}"
        )
    if _MISSING_KEY.search(str(exc)):
        # Raised before any request went out (litellm wraps it as a 500): not worth a retry.
        return AuthError(f"No API key for {model}: set {_key_variable(model)} (or pass --api-key).")
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ContextTooLongError(f"The conversation is too long for {model}: {_short(exc)}")
    if (isinstance(exc, litellm.RateLimitError) or status == 429) and _NO_QUOTA.search(str(exc)):
        return QuotaError(
            f"The provider says the account for {model} is out of quota or credit: "
            f"{_short(exc)} (check the plan and billing; retrying will not help)."
        )
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return RateLimitError(f"Rate limited by the provider: {_short(exc)}", retry_after=_retry_after(exc))
    if isinstance(exc, (litellm.Timeout, litellm.APIConnectionError)):
        return NetworkError(f"Network error talking to {model}: {_short(exc)}")
    if isinstance(exc, MidStreamFallbackError):
        cause = _short(getattr(exc, "original_exception", None) or exc)
        if _BAD_JSON.search(cause):
            cause = f"malformed data: {cause}"
        return NetworkError(f"The response stream from {model} broke off before it finished ({cause}).")
    if isinstance(exc, litellm.InternalServerError) and getattr(exc, "litellm_response_headers", 1) is None:
        # litellm reports "connection refused" as a 500 that never got an HTTP response.
        where = f" at {api_base}" if api_base else ""
        return NetworkError(f"Cannot reach {model}{where}: {_short(exc)}")
    if isinstance(exc, (litellm.InternalServerError, litellm.ServiceUnavailableError, litellm.BadGatewayError)) or (
        isinstance(status, int) and status >= 500
    ):
        return ProviderError(f"Provider error ({status or 'server'}): {_short(exc)}", status=status, retryable=True)
    if isinstance(exc, litellm.NotFoundError):
        return BadRequestError(f"Model or endpoint not found for {model}: {_short(exc)}")
    if isinstance(exc, litellm.BadRequestError) or (isinstance(status, int) and 400 <= status < 500):
        text = _short(exc)
        if "context" in text.lower() and ("length" in text.lower() or "too long" in text.lower()):
            return ContextTooLongError(f"The conversation is too long for {model}: {text}")
        return BadRequestError(f"The provider rejected the request: {text}")
    if isinstance(exc, litellm.APIError):
        return ProviderError(f"Provider error: {_short(exc)}", status=status, retryable=True)
    # httpx/aiohttp errors that escaped litellm's wrapping: treat as network trouble.
    name = type(exc).__name__.lower()
    if any(word in name for word in ("connect", "timeout", "network", "protocol", "incomplete", "read")):
        return NetworkError(f"Network error talking to {model}: {_short(exc)}")
    return ProviderError(f"Unexpected error from the provider: {type(exc).__name__}: {_short(exc)}")


def _cost(model: str, result: StreamResult) -> float:
    """The request's price from litellm's price map, cache reads and writes at their own prices."""
    from agent.llm.cost_map import request_cost

    if not result.prompt_tokens and not result.completion_tokens:
        return 0.0
    cost = request_cost(
        model,
        prompt_tokens=result.prompt_tokens or 0,
        completion_tokens=result.completion_tokens or 0,
        cache_read_tokens=result.cache_read_tokens,
        cache_write_tokens=result.cache_write_tokens,
    )
    return cost.total if cost is not None else 0.0  # models without a price (local, custom): no cost shown


async def stream_chat(
    request: ChatRequest, on_text: TextSink | None = None, into: StreamResult | None = None
) -> StreamResult:
    """Stream one completion. On failure raises LLMError with `.partial` (a StreamResult).

    `into` (optional) is filled as the stream arrives, so a caller that cancels the call
    still has what streamed, half-sent tool calls included."""
    from agent.runtime.offline import import_litellm

    litellm = import_litellm()
    for key in keys_in_use(request.model, request.api_key):  # a /model switch may use another
        remember_secret(key)
    result = into if into is not None else StreamResult()
    calls: dict[int, _CallBuffer] = {}
    kwargs: dict[str, Any] = dict(
        model=request.model,
        messages=request.messages,
        stream=True,
        stream_options={"include_usage": True},
        timeout=request.timeout,
        num_retries=0,
        max_retries=0,
    )
    if request.tools:
        kwargs["tools"] = request.tools
    if request.api_base:
        kwargs["api_base"] = request.api_base
    if request.api_key:
        kwargs["api_key"] = request.api_key
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_tokens is not None:
        kwargs["max_tokens"] = request.max_tokens
    idle = request.idle_timeout
    started = time.monotonic()
    watchdog: asyncio.Timeout | None = None
    try:
        # The idle watchdog: pushed back only by content, so a server that sends nothing
        # but keep-alive comments (which the SSE parser drops unseen) or empty chunks,
        # before or after the first token, is given up after `idle` seconds.
        async with asyncio.timeout(idle) as watchdog:
            loop = asyncio.get_running_loop()
            slack = min(1.0, idle / 10)  # rescheduling on every chunk would cost a timer each
            stream = await litellm.acompletion(**kwargs)
            clock = time.perf_counter
            since_yield = clock()
            async for chunk in stream:
                if clock() - since_yield > STREAM_YIELD_S:
                    await asyncio.sleep(0)  # let the screen draw: buffered chunks never wait on the loop
                    since_yield = clock()
                progressed = False
                usage = getattr(chunk, "usage", None)
                if usage:
                    result.prompt_tokens = getattr(usage, "prompt_tokens", None) or result.prompt_tokens
                    result.completion_tokens = getattr(usage, "completion_tokens", None) or result.completion_tokens
                    read, written = cache_tokens(usage)
                    result.cache_read_tokens = read or result.cache_read_tokens
                    result.cache_write_tokens = written or result.cache_write_tokens
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(choice, "delta", None)
                    if choice.finish_reason:
                        result.finish_reason = choice.finish_reason
                        progressed = True
                    if delta is None:
                        continue
                    if getattr(delta, "reasoning_content", None):
                        progressed = True  # a thinking model's reasoning is progress too
                    text = getattr(delta, "content", None)
                    if text:
                        progressed = True
                        result.content += text
                        if on_text is not None:
                            maybe = on_text(text)
                            if inspect.isawaitable(maybe):
                                await maybe
                    for tc in getattr(delta, "tool_calls", None) or []:
                        progressed = True
                        index = getattr(tc, "index", None)
                        if index is None:
                            index = len(calls)
                        buf = calls.setdefault(index, _CallBuffer())
                        if getattr(tc, "id", None):
                            buf.id = tc.id
                        fn = getattr(tc, "function", None)
                        if fn is not None:
                            if getattr(fn, "name", None):
                                buf.name = fn.name
                            if getattr(fn, "arguments", None):
                                buf.arguments += fn.arguments
                if progressed:
                    deadline = loop.time() + idle
                    if deadline - (watchdog.when() or 0.0) > slack:
                        watchdog.reschedule(deadline)
        if _ended_early(stream, request, calls):
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
            err.partial = result  # type: ignore[attr-defined]
            raise err from None
        if isinstance(exc, Exception):
            err = map_exception(exc, request.model, request.api_base)
            err.partial = result  # type: ignore[attr-defined]
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
        err.partial = result  # type: ignore[attr-defined]
        _log_request(request, result, started, failed=err)
        raise err
    result.cost = _cost(request.model, result)
    _log_request(request, result, started)
    return result


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


def _ended_early(stream: Any, request: ChatRequest, calls: dict[int, _CallBuffer]) -> bool:
    """A stream that ended cleanly without a finish reason was cut (a proxy or server gave up
    mid-answer). litellm then makes up finish_reason="stop" on the last chunk, so only its
    stream wrapper's `received_finish_reason` tells (not a documented name: litellm is pinned
    exactly for it, tests/llm/test_litellm_guard.py checks it, README "Dependencies" says so).
    Only providers known to always send one are held to it, except when a tool call's
    arguments are not even complete JSON: that one is cut whoever the provider is."""
    received = getattr(stream, STREAM_FINISH_REASON_ATTRIBUTE, "unknown")
    if received is not None:
        return False
    return _litellm_provider(request) in _FINISH_REASON_PROVIDERS or any(
        _broken_json(b.arguments) for b in calls.values()
    )


def _litellm_provider(request: ChatRequest) -> str:
    """The provider litellm routes `request` to ("gpt-4o" → openai), from its public resolver."""
    from agent.runtime.offline import import_litellm

    try:
        return import_litellm().get_llm_provider(request.model, api_base=request.api_base)[1]
    except Exception:  # a model litellm cannot place: it failed before streaming anyway
        return _provider(request.model)


def _broken_json(arguments: str) -> bool:
    if not arguments.strip():
        return False
    try:
        json.loads(arguments)
    except ValueError:
        return True
    return False
