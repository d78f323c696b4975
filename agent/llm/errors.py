"""Provider failures as typed errors the loop can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.llm.result import StreamResult


class LLMError(Exception):
    """Base: `str(exc)` is a readable one-line message for the user."""

    retryable = False
    # Seconds before each retry when the error has its own short schedule (its length is the
    # most retries); None: the loop's configured backoff (llm.max_retries, retry_*_delay).
    retry_delays: tuple[float, ...] | None = None
    # What had streamed when the request failed (agent/llm/client.py's stream_chat sets it):
    # the loop keeps its text and half-sent tool calls. None: raised before any request.
    partial: StreamResult | None = None


class AuthError(LLMError):
    """Bad or missing API key: never retried; the message names the variable to set."""


class RateLimitError(LLMError):
    retryable = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QuotaError(LLMError):
    """Out of credit or quota (OpenAI sends it as a 429): waiting does not help, so no retry."""


class ContextTooLongError(LLMError):
    """The request exceeds the model's window: the budget step condenses and retries."""


class NetworkError(LLMError):
    """Connection refused/reset, timeouts, a stream cut before it finished."""

    retryable = True


class UnreachableError(NetworkError):
    """Nothing answered at the address: the connection was refused or the host name did not
    resolve. A server restarting or a network blip is over in a second, a wrong address or a
    server that is down is not: retried twice, quickly, so the user hears within seconds."""

    retry_delays = (0.5, 1.0)


class ProviderError(LLMError):
    """5xx and other provider-side failures; retryable unless a 4xx said otherwise."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class BadRequestError(LLMError):
    """The provider rejected the request (4xx other than auth/limit/context)."""


class RedirectRefusedError(LLMError):
    """The endpoint answered with a redirect: cairn follows none, since the request (its key in
    a header, the whole conversation in the body) would go to an address the user never gave.
    Not retried: the same address redirects again."""


class ResponseTooLargeError(LLMError):
    """The answer passed a size cap (agent/llm/wire_limits.py): a line without end, a tool call's
    arguments, a body. Not retried: a server that sent it once does so again."""
