"""SIGTERM and SIGHUP (`kill`, a terminal that closes) end the TUI the way Ctrl+C twice does.

Not on the spot: the turn is interrupted (its command's process group killed, the open call
answered with an `Error:` result), the store is closed, and the app exits with 128 + the
signal. (`cairn -p` does the same: agent/runtime/termination.py `on_termination`, not imported here since
the runtime module stays off the path to the first frame.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from typing import Protocol

# After the clean-up, the longest the app may take to exit: a terminal that hung up leaves
# Textual's own clean-up waiting for its writer forever.
SIGNAL_EXIT_GRACE_S = 3.0
SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Closing(Protocol):
    """What a signal needs of the app: close the runtime, then exit with a code."""

    @property
    def is_headless(self) -> bool: ...
    async def close_runtime(self) -> None: ...
    def exit(self, *, return_code: int) -> None: ...


class Termination:
    def __init__(self, app: Closing) -> None:
        self.app = app
        self._caught: list[int] = []
        self._quitting: asyncio.Future | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in SIGNALS:
            try:
                loop.add_signal_handler(signum, self._on_signal, signum)
                self._caught.append(signum)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or not Unix
                pass

    def remove(self) -> None:
        """Back to the default handlers (the app has ended)."""
        loop = asyncio.get_running_loop()
        for signum in self._caught:
            loop.remove_signal_handler(signum)
        self._caught = []

    def _on_signal(self, signum: int) -> None:
        if self._quitting is None:
            self._quitting = asyncio.ensure_future(self._quit(signum))

    async def _quit(self, signum: int) -> None:
        app = self.app
        code = 128 + signum
        try:
            await app.close_runtime()
        finally:
            if not app.is_headless:
                # Everything is stored and closed by now, so the process ends even if the
                # terminal is gone.
                timer = threading.Timer(SIGNAL_EXIT_GRACE_S, _exit_now, (code,))
                timer.daemon = True
                timer.start()
            app.exit(return_code=code)


def _exit_now(code: int) -> None:
    logging.shutdown()  # cairn.log gets its last lines
    os._exit(code)
