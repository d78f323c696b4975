"""Quitting when closing fails (CairnApp.close_runtime): the quit still ends, and the failure
leaves a line in the log instead of vanishing (issue 36).

The runtime here is a stand-in object handed to the app, not a patched module: what is under
test is the app's handling of a close that raises or never ends, which a real runtime
cannot be made to do on purpose.
"""

from __future__ import annotations

import asyncio
import logging

from agent.runtime.ops import Interrupt
from agent.ui.app import CairnApp


class FailingRuntime:
    def __init__(self, close) -> None:
        self._close = close
        self.interrupted = False

    def submit(self, op):
        assert isinstance(op, Interrupt)  # the only op a quit sends
        self.interrupted = True

    async def close(self) -> None:
        await self._close()


async def test_a_close_that_raises_is_logged_and_the_quit_goes_on(make_settings, caplog):
    async def broken() -> None:
        raise OSError("database is locked")

    app = CairnApp(make_settings())
    runtime = FailingRuntime(broken)
    app.runtime = runtime
    with caplog.at_level(logging.WARNING, logger="agent.ui"):
        await app.close_runtime()
    assert app.runtime is None and runtime.interrupted
    [record] = [r for r in caplog.records if r.name == "agent.ui"]
    assert record.getMessage() == "quit: closing the session failed; quitting anyway"
    assert isinstance(record.exc_info[1], OSError)


async def test_a_close_that_never_ends_is_logged_and_the_quit_goes_on(make_settings, caplog, monkeypatch):
    never = asyncio.Event()

    async def hangs() -> None:
        await never.wait()

    app = CairnApp(make_settings())
    app.runtime = FailingRuntime(hangs)
    # The bound itself is not under test: a short one keeps the test quick.
    real_wait_for = asyncio.wait_for
    monkeypatch.setattr(asyncio, "wait_for", lambda step, seconds: real_wait_for(step, 0.01))
    with caplog.at_level(logging.WARNING, logger="agent.ui"):
        await app.close_runtime()
    assert app.runtime is None
    [record] = [r for r in caplog.records if r.name == "agent.ui"]
    assert record.getMessage() == "quit: closing the session did not end within 3 s; quitting anyway"


async def test_nothing_is_logged_when_closing_works(make_settings, caplog):
    async def fine() -> None:
        return None

    app = CairnApp(make_settings())
    app.runtime = FailingRuntime(fine)
    with caplog.at_level(logging.DEBUG, logger="agent.ui"):
        await app.close_runtime()
    assert [r for r in caplog.records if r.name == "agent.ui"] == []
    await app.close_runtime()  # a second quit has nothing left to close
