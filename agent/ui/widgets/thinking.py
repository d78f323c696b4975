"""A model's thinking in the chat: streamed dimmed above its answer, then one line.

While the model reasons its text shows as it arrives (redrawn at most LIVE_HZ times a second
however fast it streams). When the answer starts (its first text, or the message ends in a
tool call) the block collapses to "✻ Thought for 12 s"; a click, or the chat's keys
(agent/ui/widgets/block_select.py: Ctrl+O), open it again, as they do a tool's output. The
seconds are those between the first and the last piece of thinking that streamed here; a
stored message (a resumed session) has no such timing, so its line says how long the
thinking is instead: "✻ Thought (230 words)".
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from agent.fs.terminal_text import inert
from agent.ui.widgets.block_select import FoldChanged

if TYPE_CHECKING:
    from textual.timer import Timer

LIVE_HZ = 10
MARK = "✻ "


def thought_label(text: str, seconds: float | None) -> str:
    """ "Thought for 12 s" (timed while it streamed), else "Thought (230 words)"."""
    if seconds is not None:
        return "Thought for <1 s" if seconds < 1 else f"Thought for {round(seconds)} s"
    words = len(text.split())
    return f"Thought ({words:,} word{'' if words == 1 else 's'})"


class ThinkingBlock(Static):
    """The thinking of one assistant message (class "thinking": dimmed by app.tcss)."""

    def __init__(self, text: str = "", *, streaming: bool = False) -> None:
        super().__init__("", markup=False, classes="thinking")
        self.text = text
        self.streaming = streaming  # still arriving: shown whole, not collapsible yet
        self.collapsed = not streaming
        self._first: float | None = None  # when the first / last piece arrived (monotonic)
        self._last: float | None = None
        self._ready = False
        self._timer: Timer | None = None
        self.hint = ""  # set by the chat: which key opens or closes it
        self.display = bool(text)

    @property
    def seconds(self) -> float | None:
        """How long the model thought, from the first to the last piece (None: not timed)."""
        if self._first is None or self._last is None:
            return None
        return self._last - self._first

    @property
    def label(self) -> str:
        return thought_label(self.text, self.seconds)

    @property
    def collapsible(self) -> bool:
        return bool(self.text) and not self.streaming

    def on_mount(self) -> None:
        self._ready = True
        self.redraw()

    def add(self, chunk: str) -> None:
        """A piece of thinking as it streams."""
        if not chunk:
            return
        now = time.monotonic()
        if self._first is None:
            self._first = now
        self._last = now
        self.text += chunk
        self.display = True
        if not self.streaming:  # (thinking after the answer began: the line's figure moves)
            self.redraw()
        elif self._timer is None and self._ready:
            self._timer = self.set_timer(1 / LIVE_HZ, self._redraw_live)

    def done(self) -> None:
        """The answer started, or the message ended: collapse to one line."""
        if self.streaming:
            self.streaming = False
            self.collapsed = True
            self.redraw()
            if self.is_attached and self.text:
                self.post_message(FoldChanged())

    def toggle(self) -> None:
        if self.collapsible:
            self.collapsed = not self.collapsed
            self.redraw()

    def on_click(self) -> None:
        self.toggle()

    def _redraw_live(self) -> None:
        self._timer = None
        self.redraw()

    def shown(self) -> Text:
        if self.streaming:
            out = Text(MARK + "Thinking…", style="italic")
            out.append("\n" + inert(self.text.strip("\n")))
            return out
        out = Text(MARK + self.label, style="italic")
        if self.hint:
            out.append(f" · {self.hint}")
        if not self.collapsed:
            out.append("\n" + inert(self.text.strip("\n")))
        return out

    def redraw(self) -> None:
        if self._ready:
            self.update(self.shown())
