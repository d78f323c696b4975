"""A refused connection is retried at most twice, quickly (issue 28 item 6): the loop gives an
UnreachableError its own short schedule instead of llm.max_retries with exponential backoff."""

from __future__ import annotations

from agent.llm.errors import UnreachableError
from agent.runtime.ops import Prompt
from tests.llm.test_error_map import assert_plain, closed_port
from tests.loop.conftest import of_type

# What a user has by default: five retries, exponential from 1 s up to 30 s.
DEFAULT_RETRIES = {"llm": {"max_retries": 5, "retry_base_delay": 1.0, "retry_max_delay": 30.0}}


async def test_refused_connection_gets_two_quick_retries_not_the_backoff(open_runtime):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    runtime = await open_runtime(flags={**DEFAULT_RETRIES, "api_base": base})
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    retries = of_type(runtime.events, "retrying")
    assert [r.attempt for r in retries] == [1, 2]
    assert [r.max_attempts for r in retries] == [2, 2]
    assert [r.delay for r in retries] == list(UnreachableError.retry_delays or ())
    (err,) = of_type(runtime.events, "turn_error")
    assert err.message.startswith(f"Cannot reach openai/fake-model at {base}: the connection was refused")
    assert "Gave up after 2 retries" in err.message
    assert_plain(err.message)


async def test_the_short_schedule_never_exceeds_the_configured_limits(open_runtime):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    runtime = await open_runtime(flags={"llm": {"max_retries": 1, "retry_max_delay": 0.05}, "api_base": base})
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    (retry,) = of_type(runtime.events, "retrying")
    assert retry.max_attempts == 1 and retry.delay == 0.05
