"""Provider exceptions (litellm, openai, httpx) as agent.llm.errors, in the user's words.

Every failure a provider reports reaches the user and the database through `map_exception`:
it picks the typed error the loop acts on (retry or not, condense, stop) and writes a message
that names the model and what to do, with the provider's own words made readable (secrets
redacted, library prefixes and object reprs dropped).
"""

from __future__ import annotations

import email.utils
import errno
import re
import socket
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from agent.llm.errors import (
    AuthError,
    BadRequestError,
    ContextTooLongError,
    LLMError,
    NetworkError,
    ProviderError,
    QuotaError,
    RateLimitError,
    RedirectRefusedError,
    ResponseTooLargeError,
    UnreachableError,
)
from agent.llm.keys import shown_base
from agent.llm.providers import lookup, provider_of
from agent.process.secrets import redact_secrets

WHERE_TO_SET = "--api-base, or api_base in config.toml"


def retry_after(exc: Exception) -> float | None:
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
# Library internals a message may carry, removed: aiohttp's "ssl:<ssl.SSLContext object at
# 0x…>" (or "ssl:default"), any other object repr or bare address, litellm's "Handle with
# `litellm.InternalServerError`" hint, the exception it wrapped repeated after "Original
# exception:", its router's retry counts, and exception class names inside the text.
_INTERNALS = (
    re.compile(r"\s*\bssl:(?:<[^<>]*>|\S+)"),
    re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>"),
    re.compile(r"\s*\bat 0x[0-9a-fA-F]+\b"),
    re.compile(r"\s*Handle with `?litellm\.\w+`?\.?"),
    re.compile(r"\s*(?:Original exception:|LiteLLM Retried:|Received Model Group=|Available Model Group).*$"),
    re.compile(r"\blitellm\.\w*(?:Error|Exception)\b:?\s*"),
)
# A connection that never opened, said by the OS or a library in its own words.
_REFUSED_TEXT = re.compile(r"connection refused|connect call failed|errno 111\b|ECONNREFUSED", re.IGNORECASE)
_UNRESOLVED_TEXT = re.compile(
    r"name or service not known|nodename nor servname|getaddrinfo failed|name resolution|"
    r"no address associated with hostname|could not resolve host|name does not resolve",
    re.IGNORECASE,
)
_CONNECT_HOST = re.compile(r"Cannot connect to host (\[[^\]]+\]|[^\s:]+):(\d+)")
# litellm, for a model string it cannot place with a provider.
_NO_PROVIDER = re.compile(r"LLM Provider NOT provided", re.IGNORECASE)
# What the openai SDK (and litellm's own checks) say when no key was given at all.
_MISSING_KEY = re.compile(
    r"missing credentials|api_key client option must be set|missing \w* ?api key"
    r"|no api key|api key (?:is )?(?:missing|not set|required)",
    re.IGNORECASE,
)
_HTML = re.compile(r"<(?:html|body|head|title|!doctype)\b", re.IGNORECASE)
# A 429 that is about billing, not pace (OpenAI's "insufficient_quota").
_NO_QUOTA = re.compile(r"insufficient_quota|exceeded your current quota|credit balance is too low", re.IGNORECASE)
# A request over the model's window, in the words of OpenAI-compatible servers and Anthropic
# ("prompt is too long: 210000 tokens > 200000 maximum"), or OpenAI's error code.
_TOO_LONG = re.compile(
    r"context_length_exceeded|prompt is too long|maximum context length|context window|"
    r"input is too long for requested model|exceeds the context",
    re.IGNORECASE,
)
# json's messages for an SSE event that is not JSON.
_BAD_JSON = re.compile(r"^(?:Expecting |Unterminated string|Extra data|Invalid control character|Invalid \\escape)")


def readable(exc: Exception) -> str:
    """The provider's own words, made readable: every message a provider sends reaches the
    user and the database through here, so the key (an error body may echo it, a proxy may
    quote the Authorization header) and other known secrets are redacted first."""
    raw = redact_secrets(str(exc).strip())
    if _HTML.search(raw):  # a proxy's error page: its title (or its text), not its markup
        title = re.search(r"<title[^>]*>(.*?)</title>", raw, re.IGNORECASE | re.DOTALL)
        raw = " ".join(re.sub(r"<[^>]*>", " ", title.group(1) if title else raw).split())
    lines = [line for line in raw.splitlines() if line.strip()]
    # A traceback's last line is the exception; otherwise the first line says what happened.
    text = (lines[-1] if lines[0].startswith("Traceback") else lines[0]) if lines else type(exc).__name__
    for pattern in _INTERNALS:
        text = pattern.sub("", text)
    text = text.strip()
    while True:
        cleaned = _NOISE.sub("", text, count=1)
        if cleaned == text or not cleaned:
            break
        text = cleaned
    return _REPR.sub(r"\1", text)[:400] or type(exc).__name__


def _clause(exc: Exception) -> str:
    """`readable(exc)` to go on with another sentence after it (no full stop of its own)."""
    return readable(exc).rstrip(" .")


def _root(exc: Exception) -> Exception:
    """The exception under openai's bare "Connection error." (what actually went wrong)."""
    if readable(exc).rstrip(" .").lower() != "connection error":
        return exc
    inner = [e for e in _chain(exc) if isinstance(e, Exception)]
    return inner[-1] if inner else exc


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what it wraps (causes, contexts, litellm's `original_exception`), each once."""
    found: list[BaseException] = []
    todo: list[object] = [exc]
    while todo and len(found) < 20:
        item = todo.pop(0)
        if not isinstance(item, BaseException) or any(item is seen for seen in found):
            continue
        found.append(item)
        todo += [item.__cause__, item.__context__, getattr(item, "original_exception", None)]
    return found


def connect_failure(exc: BaseException) -> tuple[str, str | None] | None:
    """("refused" | "unresolved", "host:port" if a message names it) when the connection never
    opened; None for anything else (a timeout, a reset, an HTTP answer)."""
    chain = _chain(exc)
    kind = None
    for item in chain:
        if isinstance(item, socket.gaierror) or _UNRESOLVED_TEXT.search(str(item)):
            kind = "unresolved"
            break
        if (
            isinstance(item, ConnectionRefusedError)
            or (isinstance(item, OSError) and item.errno == errno.ECONNREFUSED)
            or _REFUSED_TEXT.search(str(item))
        ):
            kind = "refused"
            break
    if kind is None:
        return None
    for item in chain:
        match = _CONNECT_HOST.search(str(item))
        if match:
            return kind, f"{match.group(1)}:{match.group(2)}"
    return kind, None


def address(model: str, api_base: str | None, seen: str | None = None, provider: str | None = None) -> str:
    """Where requests for `model` go, for a message: the api_base as given (without a password
    or query, which may hold a key), else the host a connection error named, else the
    provider's default host."""
    if api_base:
        return redact_secrets(shown_base(api_base) or api_base.strip())
    if seen:
        return seen
    hosts = lookup(provider or provider_of(model)).hosts
    return hosts[0] if hosts else "the provider's default address"


def litellm_provider(litellm: Any, model: str, api_base: str | None) -> str:
    """The provider litellm routes `model` to ("gpt-4o" → openai), from its public resolver."""
    try:
        return str(litellm.get_llm_provider(model, api_base=api_base)[1])
    except Exception:  # a model litellm cannot place: the model string is the best guess
        return provider_of(model)


def _unreachable(model: str, api_base: str | None, kind: str, where: str) -> UnreachableError:
    if kind == "unresolved":
        what = "the host name could not be resolved"
        todo = (
            f"Check the address for a typo ({WHERE_TO_SET}) and your network connection."
            if api_base
            else "Check your network connection (DNS, proxy settings)."
        )
    else:
        what = "the connection was refused (nothing is listening there)"
        todo = (
            f"Check that the server is running and that the address is right ({WHERE_TO_SET})."
            if api_base
            else "Check your network connection (a proxy or firewall may refuse it)."
        )
    return UnreachableError(f"Cannot reach {model} at {where}: {what}. {todo}")


def key_variable(model: str) -> str:
    """Which variable to set, named in auth errors."""
    names = lookup(provider_of(model)).key_variables
    return names[0] if names else "the provider's API key variable"


def _is(exc: Exception, *names: str) -> bool:
    """`exc` is one of litellm's exception classes `names`. Asked without importing litellm:
    the fast path (agent/llm/fast.py) never loads it, and until it is loaded none of its
    exceptions can exist."""
    modules = [m for m in (sys.modules.get("litellm"), sys.modules.get("litellm.exceptions")) if m is not None]
    found = (getattr(m, n, None) for m in modules for n in names)
    classes = tuple(c for c in found if isinstance(c, type))
    return bool(classes) and isinstance(exc, classes)


def routed_provider(model: str, api_base: str | None) -> str:
    """The provider a request for `model` went to: litellm's answer once it is loaded (a
    request through it loads it), else the model string's (agent/llm/providers.py)."""
    litellm = sys.modules.get("litellm")
    return litellm_provider(litellm, model, api_base) if litellm is not None else provider_of(model)


def redirect_in(exc: BaseException) -> tuple[int, str] | None:
    """(status, Location) when `exc` is, or wraps, a redirect answer that was not followed:
    the fast path's own, or an httpx/openai status error litellm wrapped (a 3xx status with
    the response it came with). The Location is taken from whichever wrapper kept it."""
    chain = _chain(exc)
    status = next((s for s in map(_status_of, chain) if s is not None and 300 <= s < 400), None)
    if status is None:
        return None
    return status, next((where for where in map(_location_of, chain) if where), "")


def _status_of(item: BaseException) -> int | None:
    status = getattr(item, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(item, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _location_of(item: BaseException) -> str:
    location = getattr(item, "location", None)
    if isinstance(location, str):
        return location
    headers = getattr(getattr(item, "response", None), "headers", None)
    try:
        return str(headers.get("location") or "") if headers is not None else ""
    except Exception:  # a wrapper's own idea of headers
        return ""


def too_large_in(exc: BaseException) -> BaseException | None:
    """The wire cap `exc` is, or wraps (agent/llm/wire_limits.py), however litellm wrapped it."""
    from agent.llm.wire_limits import ResponseTooLarge

    return next((item for item in _chain(exc) if isinstance(item, ResponseTooLarge)), None)


def shown_url(url: str) -> str:
    """A URL for a message: scheme, host, port and path (a query or password may hold a key)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "an address cairn cannot read"
    if not host:
        return redact_secrets(parts.path[:200]) or "(no address)"
    return redact_secrets(f"{parts.scheme}://{host}{parts.path}"[:300])


def _redirect_refused(model: str, where: str, status: int, location: str) -> RedirectRefusedError:
    return RedirectRefusedError(
        f"{model} at {where} answered with a redirect ({status}) to {shown_url(location)}. cairn does not "
        "follow redirects: the request would carry your API key and the whole conversation to an address "
        f"you did not give. If that address is the right one, set it yourself ({WHERE_TO_SET})."
    )


def map_exception(exc: Exception, model: str, api_base: str | None = None, provider: str | None = None) -> LLMError:
    """litellm/openai/httpx exception, or the fast path's (agent/llm/http.py) → our typed
    error with a readable message; both clients' failures read the same. `provider`: the one
    the request went to, when the wire protocol knows it (agent/llm/wire.py); None: asked."""
    from agent.llm.http import StreamBroken

    if isinstance(exc, LLMError):
        return exc
    status = getattr(exc, "status_code", None)
    failed = connect_failure(exc)
    provider = provider or routed_provider(model, api_base)
    where = address(model, api_base, failed[1] if failed else None, provider)
    cap = too_large_in(exc)
    if cap is not None:
        return ResponseTooLargeError(f"The response from {model} at {where} was too large: {cap}.")
    redirect = redirect_in(exc)
    if redirect is not None:
        return _redirect_refused(model, where, *redirect)
    if failed is not None and status in (None, 500) and getattr(exc, "litellm_response_headers", None) is None:
        return _unreachable(model, api_base, failed[0], where)
    if _NO_PROVIDER.search(str(exc)):
        return BadRequestError(
            f"cairn cannot tell which provider serves the model {model!r}: write it as provider/model "
            "(e.g. anthropic/claude-sonnet-4-5, openai/gpt-4o); for an OpenAI-compatible server "
            f"give --api-base and openai/{model}."
        )
    if _is(exc, "AuthenticationError", "PermissionDeniedError") or status in (401, 403):
        return AuthError(
            f"Authentication failed for {model} at {where}: check your API key (set {key_variable(model)}, or "
            f"pass --api-key). Provider said: {readable(exc)}"
        )
    if _MISSING_KEY.search(str(exc)):
        # Raised before any request went out (litellm wraps it as a 500): not worth a retry.
        return AuthError(f"No API key for {model}: set {key_variable(model)} (or pass --api-key).")
    if _is(exc, "ContextWindowExceededError") or _TOO_LONG.search(f"{getattr(exc, 'code', '')} {exc}"):
        return ContextTooLongError(f"The conversation is too long for {model}: {readable(exc)}")
    if (_is(exc, "RateLimitError") or status == 429) and _NO_QUOTA.search(str(exc)):
        return QuotaError(
            f"The provider says the account for {model} is out of quota or credit: "
            f"{readable(exc)} (check the plan and billing; retrying will not help)."
        )
    if _is(exc, "RateLimitError") or status == 429:
        return RateLimitError(
            f"Rate limited by the provider ({model} at {where}): {readable(exc)}", retry_after=retry_after(exc)
        )
    if _is(exc, "Timeout", "APIConnectionError"):
        return NetworkError(
            f"Network error talking to {model} at {where}: {_clause(exc)}. Check your network connection."
        )
    if isinstance(exc, StreamBroken) or _is(exc, "MidStreamFallbackError"):
        cause = readable(getattr(exc, "original_exception", None) or exc)
        if _BAD_JSON.search(cause):
            cause = f"malformed data: {cause}"
        return NetworkError(f"The response stream from {model} broke off before it finished ({cause}).")
    if _is(exc, "InternalServerError") and getattr(exc, "litellm_response_headers", 1) is None:
        # litellm reports a connection that never got an HTTP response as a 500 without headers.
        return NetworkError(
            f"Cannot reach {model} at {where}: {_clause(_root(exc))}. Check the address ({WHERE_TO_SET}) "
            "and your network connection."
        )
    if _is(exc, "InternalServerError", "ServiceUnavailableError", "BadGatewayError") or (
        isinstance(status, int) and status >= 500
    ):
        return ProviderError(
            f"Provider error ({status or 'server'}) from {model} at {where}: {readable(exc)}",
            status=status,
            retryable=True,
        )
    if _is(exc, "NotFoundError") or status == 404:
        return BadRequestError(
            f"Model or endpoint not found for {model} at {where}: {_clause(exc)}. Check the model name "
            f"(/model or --model) and the address ({WHERE_TO_SET})."
        )
    if _is(exc, "BadRequestError") or (isinstance(status, int) and 400 <= status < 500):
        text = readable(exc)
        if "context" in text.lower() and ("length" in text.lower() or "too long" in text.lower()):
            return ContextTooLongError(f"The conversation is too long for {model}: {text}")
        return BadRequestError(f"The provider at {where} rejected the request for {model}: {text}")
    if _is(exc, "APIError"):
        return ProviderError(f"Provider error from {model} at {where}: {readable(exc)}", status=status, retryable=True)
    # httpx/aiohttp errors that escaped litellm's wrapping: treat as network trouble.
    name = type(exc).__name__.lower()
    if any(word in name for word in ("connect", "timeout", "network", "protocol", "incomplete", "read")):
        return NetworkError(
            f"Network error talking to {model} at {where}: {_clause(exc)}. Check your network connection."
        )
    return ProviderError(f"Unexpected error from {model} at {where}: {readable(exc)}")
