"""Timing a real terminal: launch a command in tmux and note when texts appear on screen.

Shared by the startup and resume benchmarks. One private tmux server per benchmark, kept
alive by an idle session, so no run pays for (or races with) a server starting or stopping.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable

READY_TEXT = "Ask cairn"  # the prompt's placeholder (agent/ui/widgets/prompt.py)


class PrivateTmux:
    def __init__(self, name: str) -> None:
        self.socket = f"{name}-{os.getpid()}"

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)

    def __enter__(self) -> PrivateTmux:
        os.environ.pop("TMUX", None)  # works from inside a tmux session too
        self.run("new-session", "-d", "-s", "keepalive", "sleep 3600")
        return self

    def __exit__(self, *exc: object) -> None:
        self.run("kill-server")

    def times_to_texts(
        self,
        command: str,
        texts: list[str | tuple[str, ...]],
        *,
        timeout: float,
        poll: Callable[[float], float] = lambda elapsed: 0.005,
    ) -> dict:
        """Run `command` in a 120×36 pane; ms from launch until each text was first on screen
        (a tuple: until all of its texts were on the same screen), keyed by the item.

        Returns once the last of `texts` appears (earlier ones may be missing if they never
        showed); raises RuntimeError with the screen after `timeout` seconds.
        """
        name = f"bench-{uuid.uuid4().hex[:8]}"
        start = time.perf_counter()
        started = self.run("new-session", "-d", "-s", name, "-x", "120", "-y", "36", command)
        if started.returncode != 0:
            raise RuntimeError(f"tmux new-session failed: {started.stderr.strip()}")
        seen: dict[str, float] = {}
        try:
            while True:
                elapsed = time.perf_counter() - start
                captured = self.run("capture-pane", "-p", "-t", name)
                for text in texts:
                    parts = text if isinstance(text, tuple) else (text,)
                    if text not in seen and all(part in captured.stdout for part in parts):
                        seen[text] = elapsed * 1000
                if texts[-1] in seen:
                    return seen
                if elapsed > timeout or captured.returncode != 0:
                    raise RuntimeError(
                        f"{texts[-1]!r} not on screen after {elapsed:.1f} s "
                        f"({captured.stderr.strip() or 'still running'}); screen:\n{captured.stdout}"
                    )
                time.sleep(poll(elapsed))
        finally:
            self.run("kill-session", "-t", name)
