"""One streamed chat completion through litellm, with tool calls, usage and cost.

Provider exceptions are mapped to agent.llm.errors here and nowhere else. Retries are
the loop's job (it shows a countdown and can be interrupted); this module makes one
attempt and reports what streamed before any failure via `LLMError.partial`.
"""

from __future__ import annotations

import email.utils
import inspect
import re
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from agent.llm.errors import (
    AuthError,
    BadRequestError,
    ContextTooLongError,
    LLMError,
    NetworkError,
    ProviderError,
    RateLimitError,
)
from agent.session.models import ToolCall

TextSink = Callable[[str], Awaitable[None] | None]

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
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float = 0.0
    # Tool calls whose arguments were still streaming when the stream stopped.
    partial_tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _CallBuffer:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    api_base: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    timeout: float = 600.0


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
_NOISE = re.compile(r"^(?:litellm\.)?(?:\w+Error|\w+Exception)(?::| -)\s*")


def _short(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    while True:
        cleaned = _NOISE.sub("", text, count=1)
        if cleaned == text or not cleaned:
            break
        text = cleaned
    return text[:400]


def map_exception(exc: Exception, model: str) -> LLMError:
    """litellm/openai/httpx exception → our typed error with a readable message."""
    import litellm
    from litellm.exceptions import MidStreamFallbackError

    if isinstance(exc, LLMError):
        return exc
    status = getattr(exc, "status_code", None)
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (401, 403):
        var = KEY_VARIABLE.get(_provider(model), "the provider's API key variable")
        return AuthError(
            f"Authentication failed for {model}: check your API key (set {var}, or pass --api-key). "
            f"Provider said: {_short(exc)}"
        )
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ContextTooLongError(f"The conversation is too long for {model}: {_short(exc)}")
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        return RateLimitError(f"Rate limited by the provider: {_short(exc)}", retry_after=_retry_after(exc))
    if isinstance(exc, (litellm.Timeout, litellm.APIConnectionError)):
        return NetworkError(f"Network error talking to {model}: {_short(exc)}")
    if isinstance(exc, MidStreamFallbackError):
        cause = getattr(exc, "original_exception", None) or exc
        return NetworkError(f"The response stream from {model} broke off: {_short(cause)}")
    if isinstance(exc, litellm.InternalServerError) and getattr(exc, "litellm_response_headers", 1) is None:
        # litellm reports "connection refused" as a 500 that never got an HTTP response.
        return NetworkError(f"Cannot reach {model}: {_short(exc)}")
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


def _cost(litellm: Any, model: str, prompt: int | None, completion: int | None) -> float:
    if not prompt and not completion:
        return 0.0
    try:
        p, c = litellm.cost_per_token(model=model, prompt_tokens=prompt or 0, completion_tokens=completion or 0)
        return float(p + c)
    except Exception:  # models without a price (local, custom): no cost shown
        return 0.0


async def stream_chat(request: ChatRequest, on_text: TextSink | None = None) -> StreamResult:
    """Stream one completion. On failure raises LLMError with `.partial` (a StreamResult)."""
    from agent.offline import import_litellm

    litellm = import_litellm()
    result = StreamResult()
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
    try:
        stream = await litellm.acompletion(**kwargs)
        async for chunk in stream:
            usage = getattr(chunk, "usage", None)
            if usage:
                result.prompt_tokens = getattr(usage, "prompt_tokens", None) or result.prompt_tokens
                result.completion_tokens = getattr(usage, "completion_tokens", None) or result.completion_tokens
            for choice in getattr(chunk, "choices", None) or []:
                delta = getattr(choice, "delta", None)
                if choice.finish_reason:
                    result.finish_reason = choice.finish_reason
                if delta is None:
                    continue
                text = getattr(delta, "content", None)
                if text:
                    result.content += text
                    if on_text is not None:
                        maybe = on_text(text)
                        if inspect.isawaitable(maybe):
                            await maybe
                for tc in getattr(delta, "tool_calls", None) or []:
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
    except BaseException as exc:
        result.partial_tool_calls = [vars(b) for _, b in sorted(calls.items())]
        if isinstance(exc, Exception):
            err = map_exception(exc, request.model)
            err.partial = result  # type: ignore[attr-defined]
            raise err from exc
        raise
    result.tool_calls = [
        ToolCall(id=b.id or f"call_{i}", name=b.name, arguments=b.arguments)
        for i, b in sorted(calls.items())
        if b.name or b.id
    ]
    if not result.tool_calls and not result.content.strip():
        reason = "stopped at its output limit" if result.finish_reason == "length" else "returned an empty response"
        err = ProviderError(f"The model {reason} (no text and no tool call).", retryable=True)
        err.partial = result  # type: ignore[attr-defined]
        raise err
    result.cost = _cost(litellm, request.model, result.prompt_tokens, result.completion_tokens)
    return result

