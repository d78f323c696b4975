"""When and how long a failed model request is retried, for the turn and for side requests.

A turn's request and a condense's summary request fail the same ways, so they retry the same
way: `llm.max_retries` times (fewer for an error with its own short schedule, such as a
refused connection), after the error's own delays or the configured exponential backoff with
jitter (a server's Retry-After honoured, never above `llm.retry_max_delay`). Each wait is
announced with a `Retrying` event (the countdown front ends show) and is a plain sleep, so an
interrupt cancels it. Which failures may be retried at all (only before anything streamed)
is the caller's to say: this module only counts and waits.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agent.llm.errors import LLMError
from agent.settings.schema import LLMSettings
from agent.turn.events import Event, Retrying

T = TypeVar("T")


class RetryPolicy:
    def __init__(self, llm: LLMSettings, emit: Callable[[Event], None]) -> None:
        self.llm = llm
        self.emit = emit

    def limit(self, exc: LLMError) -> int:
        """How often `exc` is retried: llm.max_retries, or fewer for an error with its own short
        schedule (a refused connection or an unknown host: at most twice, see UnreachableError)."""
        limit = self.llm.max_retries
        return limit if exc.retry_delays is None else min(limit, len(exc.retry_delays))

    def delay(self, attempt: int, exc: LLMError) -> float:
        """Seconds before retry number `attempt`: the error's own schedule (never above
        llm.retry_max_delay), else the configured backoff (Retry-After honoured)."""
        if exc.retry_delays:
            return min(exc.retry_delays[min(attempt, len(exc.retry_delays)) - 1], self.llm.retry_max_delay)
        return self.backoff(attempt, getattr(exc, "retry_after", None))

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        llm = self.llm
        if retry_after is not None:
            return min(retry_after, llm.retry_max_delay)
        delay = min(llm.retry_max_delay, llm.retry_base_delay * 2 ** (attempt - 1))
        return delay * random.uniform(0.5, 1.0)

    def attempts(self) -> Attempts:
        """A fresh count of retries, for one request."""
        return Attempts(self)

    async def run(self, send: Callable[[], Awaitable[T]]) -> T:
        """`send()` until it succeeds or its error may not be retried (then raised)."""
        attempts = self.attempts()
        while True:
            try:
                return await send()
            except LLMError as exc:
                if not await attempts.again(exc):
                    raise


class Attempts:
    """The retries of one request so far."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.count = 0

    async def again(self, exc: LLMError) -> bool:
        """After `exc`: False when it is not retried (not retryable, or the retries are used
        up); else the wait announced and slept (an interrupt cancels it), True."""
        limit = self.policy.limit(exc)
        if not exc.retryable or self.count >= limit:
            return False
        self.count += 1
        delay = self.policy.delay(self.count, exc)
        self.policy.emit(Retrying(attempt=self.count, max_attempts=limit, delay=delay, reason=str(exc)))
        await asyncio.sleep(delay)
        return True

    def gave_up(self) -> str:
        """What the user is told after the retries ran out ("" when there were none)."""
        if not self.count:
            return ""
        return f" (Gave up after {self.count} {'retry' if self.count == 1 else 'retries'}.)"
