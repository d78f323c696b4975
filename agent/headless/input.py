"""`--input-format stream-json`: follow-up user messages on stdin, one JSON object a line.

A line is `{"type": "user", "text": "..."}`, or the message shape other agents' stream
inputs use: `{"type": "user", "message": {"role": "user", "content": "..." | [{"type":
"text", "text": "..."}]}}`. Blank lines are skipped; a line that is neither is reported (an
`error` line on stdout) and skipped. The run takes the next message when a turn has ended,
and ends at end of input (docs/headless.md).

stdin is read by a daemon thread (a blocked read must never hold up the exit) that hands
lines to the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any, TextIO


class InputError(ValueError):
    """A stdin line that is not a user message."""


def parse_line(line: str) -> str | None:
    """The user text of one stdin line; None for a blank line; InputError otherwise."""
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise InputError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("type") != "user":
        raise InputError('expected an object with "type": "user"')
    if isinstance(data.get("text"), str):
        return data["text"]
    message = data.get("message")
    content: Any = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = [
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
        ]
        if texts:
            return "\n".join(texts)
    raise InputError('expected "text" or "message": {"content": ...} with text')


class StdinMessages:
    """The user messages arriving on `stream` as they come; `next()` → text, or None at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.line_number = 0
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._read, name="cairn-stdin", daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.stream:
                self._put(line)
        except (OSError, ValueError):  # a closed or unreadable stdin ends the input
            pass
        self._put(None)

    def _put(self, item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the run is over
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def next(self, on_error) -> str | None:
        """The next message's text; `on_error(text)` hears about lines that are not one."""
        while True:
            line = await self._queue.get()
            if line is None:
                return None
            self.line_number += 1
            try:
                text = parse_line(line)
            except InputError as exc:
                on_error(f"stdin line {self.line_number} skipped: {exc}")
                continue
            if text is not None and text.strip():
                return text
