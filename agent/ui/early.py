"""The first screen, drawn before Textual is imported: the prompt takes typing at once.

Importing Textual alone takes ~0.3 s on a small machine, longer than a prompt should take
to appear. So `cairn` first draws the prompt box and status line itself (plain ANSI, the
same places and placeholder as the app's), reads what the user types in a thread while
Textual loads, echoes it in the box, and hands it over (`TypeAhead`) when the app starts:
nothing typed early is lost, and Enter sends it as soon as the app can. Keys that are not
text (arrows, function keys: escape sequences) are ignored until the app is up; Ctrl+C
quits at once. Keys typed even before the screen took the terminal (the shell's cooked mode
turned their Enter into a line feed) are read first, their line feed taken as Enter. Only
the standard library is imported here (and agent/fs/terminal_text.py, which is standard
library only).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import select
import sys
import termios
import threading
import tty
import unicodedata
from collections.abc import Callable
from typing import Any

from agent.fs.terminal_text import inert

PLACEHOLDER = "Ask cairn…  (/ for commands, Ctrl+J for a new line)"
STARTING = "starting…"
POLL_S = 0.02  # how often the reader looks at the stop flag while no key arrives
_BORDER = "\x1b[38;5;32m"  # the prompt border's blue in a 256-colour terminal
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"
_CTRL_C, _CTRL_U, _BACKSPACE, _DELETE = 0x03, 0x15, 0x08, 0x7F
# The app's prompt (app.tcss #prompt): margin, border and padding of one cell each side,
# at most 12 rows high with its border; the TextArea keeps one cell for the cursor.
PROMPT_CHROME = 6
PROMPT_MAX_ROWS = 10
CURSOR_CELL = 1
_CHUNK = re.compile(r"\S+\s*|\s+")  # a word and the blanks after it, as Textual wraps them


class TypeAhead:
    """What was typed before the app started: `text`, and whether Enter sent it."""

    def __init__(self, text: str = "", submitted: bool = False) -> None:
        self.text = text
        self.submitted = submitted

    def __repr__(self) -> str:
        return f"TypeAhead(text={self.text!r}, submitted={self.submitted})"


class KeyBuffer:
    """Turns raw terminal bytes into the prompt's text (pure: the screen's tested core)."""

    def __init__(self) -> None:
        self.text = ""
        self.submitted = False
        self.quit = False
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes) -> None:
        if self.submitted or self.quit:
            return
        if b"\x1b" in data:
            return  # arrows, function keys, Alt+key: not text, and no cursor to move yet
        # Enter sends (it ends the burst the terminal delivers); a carriage return inside a
        # burst is a pasted line break.
        enter = data.endswith(b"\r")
        for byte in data[:-1] if enter else data:
            if byte == _CTRL_C:
                self.quit = True
                return
            if byte in (_BACKSPACE, _DELETE):
                self.text = self.text[:-1]
            elif byte == _CTRL_U:
                self.text = ""
            elif byte in (0x0A, 0x0D):  # Ctrl+J, or a pasted line break
                self.text += "\n"
            elif byte == 0x09:
                self.text += "    "
            elif byte >= 0x20:
                self.text += self._decoder.decode(bytes([byte]))
        if enter and self.text.strip():
            self.submitted = True

    def feed_queued(self, data: bytes) -> None:
        """Keys typed before the screen took the terminal, read in one go: the shell's cooked
        mode had turned their Enter into a line feed (ICRNL), so a line feed here is Enter
        (nobody types Ctrl+J blind before a prompt is drawn). What follows the first Enter is
        dropped: it cannot be put back in the terminal's queue for the app."""
        line, enter, _rest = data.replace(b"\r", b"\n").partition(b"\n")
        for byte in line:  # one key at a time: a line break inside is no paste here
            self.feed(bytes([byte]))
        if enter:
            self.feed(b"\r")


def cells(text: str) -> int:
    """Terminal cells `text` takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_line(line: str, width: int) -> list[str]:
    """`line` cut into rows exactly where the app's prompt (a soft-wrapping Textual TextArea)
    cuts it: whole words with their trailing blanks, a word wider than a row folded. The first
    frame and the app then show the same rows, so nothing jumps when the app takes over."""
    width = max(1, width)
    rows = [""]
    used = 0
    for match in _CHUNK.finditer(line):
        chunk = match.group()
        size = cells(chunk)
        if size <= width - used:
            rows[-1] += chunk
            used += size
        elif size > width:  # folded: it starts a row of its own (unless it opens the line)
            if match.start():
                rows.append("")
                used = 0
            for char in chunk:
                if used + cells(char) > width:
                    rows.append("")
                    used = 0
                rows[-1] += char
                used += cells(char)
        else:
            if used and match.start():
                rows.append("")
                used = 0
            rows[-1] += chunk
            used += size
    return rows


def prompt_rows(text: str, inner: int) -> list[str]:
    """The rows the prompt box shows for `text`: every line wrapped, the last ones that fit
    (the box grows to PROMPT_MAX_ROWS, then scrolls to keep the cursor in view)."""
    rows = [row for line in text.split("\n") for row in wrap_line(line, inner - CURSOR_CELL)]
    return rows[-PROMPT_MAX_ROWS:]


def frame(
    width: int, height: int, text: str, status: str, sent: str = "", history: list[str] | tuple[str, ...] = ()
) -> str:
    """ANSI for the whole first screen, laid out as the app lays it out: `history` lines
    (a resumed session's last messages) above the prompt box, then `sent` (a prompt Enter
    sent), the box with `text` wrapped as the app wraps it (or the placeholder) and the cursor
    after it, the status line."""
    inner = max(1, width - PROMPT_CHROME)
    text, sent = inert(text), inert(sent)  # a paste may hold what a terminal obeys (U+009B is a CSI)
    rows = prompt_rows(text, inner) if text else [PLACEHOLDER[:inner]]
    top = max(1, height - 2 - len(rows))  # the box's top border; the status line is the last row
    chat = list(history)
    if sent:
        chat += ["", f" {_BORDER}▌{_RESET} {sent.strip().split(chr(10), 1)[0][:inner]}"]
    chat_rows = max(0, top - 2)  # the chat's rows, with one blank row above the box
    out = ["\x1b[H\x1b[2J"]
    for row, chat_line in enumerate(
        chat[len(chat) - chat_rows :] if chat_rows else [], start=1 + chat_rows - min(chat_rows, len(chat))
    ):
        out.append(f"\x1b[{row};1H{chat_line}")
    out.append(f"\x1b[{top};2H{_BORDER}╭{'─' * (width - 4)}╮{_RESET}")
    for index, shown in enumerate(rows, start=1):
        body = shown if text else f"{_DIM}{shown}{_RESET}"
        pad = " " * max(0, inner - cells(shown))
        out.append(f"\x1b[{top + index};2H{_BORDER}│{_RESET} {body}{pad} {_BORDER}│{_RESET}")
    bottom = top + len(rows) + 1
    out += [
        f"\x1b[{bottom};2H{_BORDER}╰{'─' * (width - 4)}╯{_RESET}",
        f"\x1b[{bottom + 1};3H{_DIM}{status[: max(0, width - 3)]}{_RESET}",
        f"\x1b[{top + len(rows)};{4 + (cells(rows[-1]) if text else 0)}H",
    ]
    return "".join(out)


def handoff_mode(saved: list) -> list:
    """The shell's terminal mode `saved` as Textual's driver changes it when the app starts
    (textual/drivers/linux_driver.py `_patch_lflag`, `_patch_iflag`): keys unechoed, read at
    once, Ctrl+C and Enter as bytes. Output processing stays the shell's, as the app has it."""
    mode: list[Any] = [list(part) if isinstance(part, list) else part for part in saved]
    mode[tty.LFLAG] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
    mode[tty.IFLAG] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
    mode[tty.CC][termios.VMIN] = 1
    mode[tty.CC][termios.VTIME] = 0
    return mode


class EarlyScreen:
    """Owns the terminal from launch until the app takes it (`stop`)."""

    def __init__(self, fd_in: int, fd_out: int, saved: list, history: list[str]) -> None:
        self._in = fd_in
        self._history = history
        self._out = fd_out
        self._saved = saved
        self._keys = KeyBuffer()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="cairn-early-keys", daemon=True)

    @classmethod
    def start(cls, history: Callable[[int], list[str]] | None = None) -> EarlyScreen | None:
        """Draw the first screen and start taking keys; None where there is no terminal to
        draw on (a pipe, TERM=dumb, CAIRN_NO_EARLY_SCREEN set). `history(width)` gives the
        lines of a resumed session to show above the prompt."""
        if os.environ.get("CAIRN_NO_EARLY_SCREEN") or os.environ.get("TERM", "") in ("", "dumb"):
            return None
        try:
            fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
            if not (os.isatty(fd_in) and os.isatty(fd_out)):
                return None
            saved = termios.tcgetattr(fd_in)
            tty.setraw(fd_in, termios.TCSANOW)  # no echo, no signals: Ctrl+C is read as a key
        except (OSError, ValueError, termios.error):
            return None
        lines: list[str] = []
        if history is not None:
            try:
                lines = history(os.get_terminal_size(fd_out).columns)
            except Exception:  # a preview must never stop cairn from starting
                lines = []
        screen = cls(fd_in, fd_out, saved, lines)
        screen._take_queued()
        screen._write("\x1b[?1049h\x1b[?25h")  # the alternate screen, as the app uses; cursor on
        screen._draw()
        screen._thread.start()
        return screen

    def stop(self) -> TypeAhead:
        """Stop reading; keys typed from now on wait in the terminal for the app.

        The terminal is put in the mode the app is about to set (no echo, no line editing,
        Enter read as a carriage return), not back in the shell's: a key typed in the moment
        before the app reads would otherwise be echoed over the screen, and an Enter would
        arrive as a line feed (a new line in the prompt, not a send). The shell's mode comes
        back with `restore`, once the app has ended (the app restores the mode it found)."""
        self._stop.set()
        self._thread.join(timeout=1)
        self._set_mode(handoff_mode(self._saved))
        return TypeAhead(self._keys.text, self._keys.submitted)

    def restore(self) -> None:
        """Give the terminal back as it was before cairn started."""
        self._set_mode(self._saved)

    def abandon(self) -> None:
        """The app never started: leave the alternate screen too."""
        self.stop()
        self.restore()
        self._write("\x1b[?1049l")

    def _set_mode(self, mode: list) -> None:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(self._in, termios.TCSANOW, mode)

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError):
            os.write(self._out, text.encode())

    def _draw(self) -> None:
        try:
            width, height = os.get_terminal_size(self._out)
        except OSError:
            width, height = 80, 24
        keys = self._keys
        if keys.submitted:
            self._write(
                frame(width, height, "", f"{STARTING} (sending when ready)", sent=keys.text, history=self._history)
            )
        else:
            self._write(frame(width, height, keys.text, STARTING, history=self._history))

    def _take_queued(self) -> None:
        """Read what was typed between the shell's Enter and the raw mode (it waits in the
        terminal's queue, cooked: its Enter became a line feed), before any new key."""
        data = b""
        with contextlib.suppress(OSError, ValueError):
            while select.select([self._in], [], [], 0)[0]:
                chunk = os.read(self._in, 4096)
                if not chunk:
                    break
                data += chunk
        if data:
            self._keys.feed_queued(data)
        if self._keys.quit:
            self.restore()
            os._exit(130)

    def _read(self) -> None:
        while not self._stop.is_set() and not self._keys.submitted:
            try:
                ready, _, _ = select.select([self._in], [], [], POLL_S)
                if not ready or self._stop.is_set():
                    continue
                data = os.read(self._in, 4096)
            except OSError:
                return
            self._keys.feed(data)
            if self._keys.quit:
                # Nothing is open or written yet: leave the terminal as it was and go.
                self.restore()
                self._write("\x1b[?1049l")
                os._exit(130)
            self._draw()
            if self._keys.submitted:
                return  # later keys stay in the terminal's queue for the app to read
