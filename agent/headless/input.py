"""What `cairn -p` reads on stdin: piped text for the prompt, or stream-json messages.

Text input (the default): stdin that is not a terminal is read whole, as UTF-8 text of at
most MAX_PIPED_PROMPT_BYTES, and appended to PROMPT after a blank line (`git diff | cairn -p
"review this"`); with no PROMPT (`-p` alone, or `-p ""`) it is the whole prompt. A terminal
is never read: nothing was piped.

`--input-format stream-json`: follow-up user messages on stdin, one JSON object a line.

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
import select
import threading
from typing import Any, TextIO

# The most text `cairn -p` takes on stdin (1 MB): more is a log or a dump, not a prompt, and
# would fill the model's window at once; a larger file is better named in the prompt.
MAX_PIPED_PROMPT_BYTES = 1_000_000


class InputError(ValueError):
    """A stdin line that is not a user message."""


# With a prompt given, how long -p waits for piped text to start (or the pipe to close).
PIPED_INPUT_GRACE_S = 1.0


class PipedInputError(ValueError):
    """Piped stdin cannot be the prompt (too large, not text) or there is no prompt at all."""


def prompt_with_stdin(prompt: str, stdin: TextIO | None) -> str:
    """PROMPT with the text piped on stdin appended (a terminal, or no stdin, is not read).

    Raises PipedInputError (a readable sentence) for more than MAX_PIPED_PROMPT_BYTES, input
    that is not UTF-8 text, or when neither PROMPT nor stdin gives any text."""
    piped = _read_piped(stdin, wait=not prompt.strip())
    if not piped.strip():
        if not prompt.strip():
            raise PipedInputError(
                'no prompt: give it after -p (cairn -p "fix the tests"), or pipe it in (cat task.md | cairn -p).'
            )
        return prompt
    return f"{prompt.rstrip()}\n\n{piped}" if prompt.strip() else piped


def _silent(stdin: TextIO) -> bool:
    """A pipe still open with nothing on it after PIPED_INPUT_GRACE_S: a parent that keeps its
    stdin open without writing (a CI runner, an editor, a test harness) must not hang `-p`."""
    try:
        fd = stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return False  # not a file descriptor (an embedding's stream): read it
    try:
        ready, _, _ = select.select([fd], [], [], PIPED_INPUT_GRACE_S)
    except (OSError, ValueError):
        return False
    return not ready  # data or end of file makes it ready


def _read_piped(stdin: TextIO | None, *, wait: bool) -> str:
    """`wait`: the whole prompt comes from stdin, so wait for it however long; else a pipe
    that stays silent for PIPED_INPUT_GRACE_S is left unread."""
    if stdin is None or stdin.closed:
        return ""
    try:
        if stdin.isatty():
            return ""
        if not wait and _silent(stdin):
            return ""
        raw = stdin.buffer.read(MAX_PIPED_PROMPT_BYTES + 1) if hasattr(stdin, "buffer") else None
    except (OSError, ValueError):  # a closed or unreadable descriptor: nothing was piped
        return ""
    if raw is None:  # a text-only stream (tests, embedding): read characters, bounded the same way
        chars = stdin.read(MAX_PIPED_PROMPT_BYTES + 1)
        raw = chars.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_PIPED_PROMPT_BYTES:
        raise PipedInputError(
            f"standard input is larger than {MAX_PIPED_PROMPT_BYTES // 1_000_000} MB, the most cairn -p takes as "
            "a prompt; save it to a file and name the file in the prompt instead."
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PipedInputError(
            f"standard input is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}; "
            "binary data?); pipe text, or name the file in the prompt instead."
        ) from None
    if "\x00" in text:
        raise PipedInputError(
            "standard input is binary data (it holds NUL bytes), not text; name the file in the prompt instead."
        )
    return text.strip("\n")


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
