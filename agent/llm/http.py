"""The fast path's HTTP: one pooled httpx client per owner, a streamed POST, and the
failures it raises for agent/llm/error_map.py to word.

Pooling matters: a turn's requests reuse the TLS connection instead of paying a handshake
each. The pool belongs to whoever builds the requests (the session's request builder) and
is closed with it; a request without one gets a client of its own for that request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Awaitable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

# The most of an error body kept for its message (a proxy's HTML page can be large).
ERROR_BODY_LIMIT = 64 * 1024
# Seconds to open a connection: a wrong address is told in seconds, not after the request's
# whole timeout (what litellm's openai client does too).
CONNECT_TIMEOUT_S = 30.0


class HTTPStatusFailure(Exception):
    """The provider answered with an error status; `str()` is its own message."""

    def __init__(self, status: int, message: str, headers: Any, code: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status
        self.headers = headers  # Retry-After is read from here
        self.code = code  # the error's type or code when the body gave one ("context_length_exceeded")


class StreamBroken(Exception):
    """The stream broke off after it began (cut connection, malformed data, an error event)."""


class Redirected(Exception):
    """The endpoint answered with a redirect, which is not followed (agent/llm/errors.py's
    RedirectRefusedError says why)."""

    def __init__(self, status: int, location: str) -> None:
        super().__init__(f"HTTP {status} redirect to {location or '(no Location)'}")
        self.status_code = status
        self.location = location


class ConnectionPool:
    """An httpx.AsyncClient made on first use, on the loop that uses it."""

    def __init__(self) -> None:
        self._client: httpx.AsyncClient | None = None
        self._retired: list[httpx.AsyncClient] = []

    def client(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            self._client = new_client()
        return self._client

    def retire(self) -> None:
        """After a stream was cut short (an interrupt, the idle watchdog): httpx can leave the
        cancelled exchange's connection marked busy in its pool, and enough of them would fill
        it. Later requests get a fresh client; the old one may still carry other streams (a
        sibling subagent's), so it is closed with the pool, not now."""
        if self._client is not None:
            self._retired.append(self._client)
            self._client = None

    async def aclose(self) -> None:
        clients = [c for c in (self._client, *self._retired) if c is not None]
        self._client, self._retired = None, []
        for client in clients:
            await client.aclose()


def new_client() -> httpx.AsyncClient:
    """trust_env: proxies and certificates from the environment, as litellm's clients take them.
    No redirect is followed (httpx's default, kept explicit): one to another host would carry
    the key and the conversation there. Every answer is metered (agent/llm/wire_limits.py)."""
    import httpx

    from agent.llm.metered_body import bound_response

    return httpx.AsyncClient(
        timeout=None, trust_env=True, follow_redirects=False, event_hooks={"response": [bound_response]}
    )


async def stream_lines(
    pool: ConnectionPool | None, url: str, headers: dict[str, str], content: bytes, timeout: float
) -> AsyncGenerator[str, None]:
    """POST `content` (JSON) and yield the response's lines. An error status raises HTTPStatusFailure
    with the provider's own message; a connection that drops mid-body, StreamBroken.

    The HTTP exchange runs in a task of its own, cancelled exactly once when the reader stops
    early: cancelled again and again (Esc pressed repeatedly), httpx's clean-up is itself cut
    short and leaves the connection open in the pool, the provider still generating."""
    queue: asyncio.Queue[Any] = asyncio.Queue()
    exchange = asyncio.ensure_future(_exchange(pool, url, headers, content, timeout, queue))
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        if not exchange.done():
            exchange.cancel()
            await _to_the_end(asyncio.gather(exchange, return_exceptions=True))
            if pool is not None:
                pool.retire()


_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


async def _exchange(
    pool: ConnectionPool | None,
    url: str,
    headers: dict[str, str],
    content: bytes,
    timeout: float,
    queue: asyncio.Queue[Any],
) -> None:
    import httpx

    own = new_client() if pool is None else None
    client = own or pool.client()  # type: ignore[union-attr]
    limits = httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S))
    try:
        request = client.build_request("POST", url, headers=headers, content=content, timeout=limits)
        response = await client.send(request, stream=True)
        try:
            if response.status_code >= 400:
                raise await _failure(response)
            if 300 <= response.status_code < 400:
                raise Redirected(response.status_code, response.headers.get("location", ""))
            try:
                async for line in response.aiter_lines():
                    queue.put_nowait(line)
            except (httpx.TransportError, httpx.StreamError) as exc:
                raise StreamBroken(str(exc) or type(exc).__name__) from exc
        finally:
            await response.aclose()
        queue.put_nowait(_END)
    except Exception as exc:
        queue.put_nowait(_Failed(exc))
    finally:
        if own is not None:
            await own.aclose()


async def _to_the_end(closing: Awaitable[Any]) -> None:
    """Close to the end even when cancelled meanwhile (Esc pressed twice): a half-closed
    response would leave the connection open and the provider generating. Closing a socket
    does not wait on the network, so this never hangs. A cancel that came meanwhile is
    raised once the close is done."""
    task = asyncio.ensure_future(closing)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    task.result()
    if cancelled:
        raise asyncio.CancelledError


async def _failure(response: httpx.Response) -> HTTPStatusFailure:
    raw = b""
    try:
        async for piece in response.aiter_bytes():
            raw += piece
            if len(raw) > ERROR_BODY_LIMIT:
                break
    except Exception:  # a body cut short still has a status to report
        pass
    text = raw[:ERROR_BODY_LIMIT].decode("utf-8", "replace").strip()
    message, code = error_message(text)
    return HTTPStatusFailure(
        response.status_code,
        message or response.reason_phrase or f"HTTP {response.status_code}",
        response.headers,
        code,
    )


def error_message(text: str) -> tuple[str, str | None]:
    """The message and code of an error body: OpenAI's `{"error": {"message", "code"}}`,
    Anthropic's `{"type": "error", "error": {"type", "message"}}`, or the text as it is."""
    try:
        body = json.loads(text)
    except ValueError:
        return text, None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        message = error.get("message")
        return (str(message) if message else text), (str(code) if code else None)
    if isinstance(error, str):
        return error, None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"], None
    return text, None
