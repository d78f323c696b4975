"""One tool call in the chat: its header, live output while it runs, then its result.

A result is collapsed unless it is a short diff (its body is built on first expand:
laying out hundreds of hidden outputs made resuming a long session take seconds). While
a command runs, the last lines it printed show under the header, redrawn at most LIVE_HZ
times a second however fast it prints; an interrupt leaves them there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from agent.ui.widgets import tool_render

if TYPE_CHECKING:
    from textual.timer import Timer

    from agent.session.models import Message, ToolCall

DIFF_EXPANDED_MAX_LINES = 40
LIVE_TAIL_LINES = 8  # of a running command's output
LIVE_HZ = 10


def diff_text(diff: str) -> Text:
    """A unified diff with +/- colouring (no lexer: cheap and theme-neutral)."""
    out = Text()
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = "dim"
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


class ToolBlock(Vertical):
    """One tool call: `name args` header, then a collapsed result with a one-line summary."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(classes="tool-block")
        self.call = call
        self.summary = ""
        self.result: Message | None = None
        self._ready = False
        self._body_pending = False
        self.pending_text = "  ⎿ running…"
        self.live: list[str] = []  # output arrived since the last redraw
        self._tail = ""  # the last lines of output so far
        self._live_timer: Timer | None = None

    def _header(self) -> Text:
        header = Text()
        header.append("● ", style="dim")
        header.append(tool_render.inert(self.call.name), style="bold")
        args = tool_render.format_args(self.call)
        if args:
            header.append(" " + args)
        if self.result is not None and tool_render.one_line(self.result):
            header.append(" · " + self.summary, style="red" if tool_render.is_error(self.result) else "")
        return header

    def compose(self):
        yield Static(self._header(), classes="tool-header")
        if self.result is not None:  # from history: no second layout pass for the result
            if not tool_render.one_line(self.result):
                yield self._result_widget()
        else:
            yield Static(self.pending_text, markup=False, classes="tool-running")

    def on_mount(self) -> None:
        self._ready = True

    def mark_stopped(self, text: str = "  ⎿ interrupted") -> None:
        """The call will get no result (interrupted turn, or an orphan in history); what it
        printed so far stays above the line."""
        self._flush_live()
        self.pending_text = f"{self._live_text()}\n{text}" if self._tail else text
        self._show_pending()

    def add_output(self, text: str) -> None:
        """Output of the running command: its last lines shown live (redrawn at most LIVE_HZ)."""
        self.live.append(text)
        if self._live_timer is None and self._ready:
            self._live_timer = self.set_timer(1 / LIVE_HZ, self._redraw_live)

    def _flush_live(self) -> None:
        if self.live:
            lines = (self._tail + "".join(self.live)).split("\n")
            self._tail = "\n".join(lines[-LIVE_TAIL_LINES - 1 :])
            self.live.clear()

    def _redraw_live(self) -> None:
        self._live_timer = None
        self._flush_live()
        if self.result is None and self._tail:
            self.pending_text = self._live_text() + "\n  ⎿ running…"
            self._show_pending()

    def _live_text(self) -> str:
        shown = self._tail.rstrip("\n").split("\n")[-LIVE_TAIL_LINES:]
        return "\n".join("    " + tool_render.inert(line) for line in shown)

    def _show_pending(self) -> None:
        if self.result is None and self._ready:
            for widget in self.query(".tool-running").results(Static):
                widget.update(self.pending_text)

    def set_result(self, message: Message) -> None:
        """Attach the result; shown now if mounted, else when the block composes."""
        self.result = message
        self.summary = tool_render.summarize_result(message)
        self.set_class(tool_render.is_error(message), "-error")  # a header-only error is marked too
        if self._ready:
            self.query(".tool-running").remove()
            if tool_render.one_line(message):
                self.query_one(".tool-header", Static).update(self._header())
            else:
                self.mount(self._result_widget())

    def _result_widget(self) -> Widget:
        from textual.content import Content
        from textual.widgets import Collapsible

        message = self.result
        assert message is not None
        failed = tool_render.is_error(message)
        self.set_class(failed, "-error")
        diff = tool_render.result_diff(message)
        if (diff is not None and not failed and len(diff.splitlines()) <= DIFF_EXPANDED_MAX_LINES) or (
            diff is None and tool_render.shown_open(message)
        ):
            return Collapsible(self._body(), title=Content(self.summary), collapsed=False)  # type: ignore[arg-type]  # textual takes Content (typed str)
        # Collapsed: the body is built on first expand. Laying out hundreds of hidden
        # outputs made resuming a long session take seconds.
        self._body_pending = True
        return Collapsible(title=Content(self.summary), collapsed=True)  # type: ignore[arg-type]  # textual takes Content (typed str)

    def _body(self) -> Static:
        message = self.result
        assert message is not None
        diff = tool_render.result_diff(message)
        if diff is not None and not tool_render.is_error(message):
            return Static(diff_text(diff), classes="tool-diff")
        return Static(tool_render.result_body(message), markup=False, classes="tool-output")

    def on_collapsible_expanded(self, event) -> None:
        if self._body_pending:
            self._body_pending = False
            event.collapsible.query_one("Contents").mount(self._body())
