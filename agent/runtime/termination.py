"""SIGTERM and SIGHUP end a run the way Ctrl-C does (a front end installs `on_termination`).

The TUI's side is agent/ui/termination.py; `cairn -p` installs this directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

# `kill`, `timeout`, a supervisor stopping a job; a terminal that closes sends SIGHUP.
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def on_termination(callback: Callable[[int], None]) -> Callable[[], None]:
    """Call `callback(signum)` on the running event loop for SIGTERM and SIGHUP, instead of
    dying on the spot with a command still running (in its own process group, which no
    signal to cairn reaches) and its call unanswered. A front end ends the way Ctrl-C ends
    it: the turn is interrupted (the command's group killed, every open call answered with
    an `Error:` result), then the store is closed. Returns the function that puts the
    default handling back. Only the main thread's loop can do this; elsewhere it does nothing."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for signum in TERMINATING_SIGNALS:
        try:
            loop.add_signal_handler(signum, callback, signum)
            installed.append(signum)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or not Unix
            pass

    def restore() -> None:
        for signum in installed:
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(signum)

    return restore
