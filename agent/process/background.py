"""Work off the event loop that must never hold up quitting. Imports nothing heavy."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any


async def in_daemon_thread(fn: Callable[..., Any], *args: Any) -> None:
    """Run `fn` in a daemon thread: quitting during start-up does not wait for imports
    (asyncio.to_thread's executor threads are joined at exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(exc: BaseException | None) -> None:
        if not done.done():
            done.set_exception(exc) if exc is not None else done.set_result(None)

    def target() -> None:
        error: BaseException | None = None
        try:
            fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=target, name="cairn-load", daemon=True).start()
    await done
