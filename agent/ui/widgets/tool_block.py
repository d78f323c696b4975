"""One tool call in the chat: its header, live output while it runs, then its result.

A result is collapsed unless it is a short diff (its body is built on first expand:
laying out hundreds of hidden outputs made resuming a long session take seconds). While
a command runs, the last lines it printed show under the header, redrawn at most LIVE_HZ
times a second however fast it prints; an interrupt leaves them there.

A collapsed result is one line, fitted to the row: a summary too long for it ends in `…`
(the row's edge would cut it mid-word with no sign). Where the row has room, it names the
key that opens it, as a collapsed thought and a long pasted prompt do. Every collapsed block
says so, each from its own summary and width alone: a hint kept on the newest block only had
to be moved as blocks mounted, in an order a resumed session does not fix, and was drawn or
not by which came first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from agent.ui.widgets import tool_render

if TYPE_CHECKING:
    from textual.content import Content
    from textual.timer import Timer

    from agent.session.models import Message, ToolCall

DIFF_EXPANDED_MAX_LINES = 40
LIVE_TAIL_LINES = 8  # of a running command's output
LIVE_HZ = 10
EXPAND_HINT = " · Ctrl+O to expand"  # the key: APP_BINDINGS' toggle_output (agent/ui/keys.py)
TITLE_CHROME = 4 + 2  # a collapsed title's padding (app.tcss: `0 2`) and its "▶ " symbol
STDERR_STYLE = "red"  # a command's stderr lines in its expanded output (as in a `!command`'s)
HEADER_INDENT = 2  # a header too long for its row goes on under the name, past the "● "


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
        self.foldable = False  # its result sits in a Collapsible (Ctrl+O can open or close it)
        self._fitted_width = 0  # the width the header and the title were last fitted to

    def _header(self) -> Text:
        header = Text()
        header.append("● ", style="dim")
        header.append(tool_render.inert(self.call.name), style="bold")
        args = tool_render.format_args(self.call)
        if args:
            header.append(" " + args)
        if self.result is not None and tool_render.one_line(self.result):
            header.append(" · " + self.summary, style="red" if tool_render.is_error(self.result) else "")
        return self._hang(header)

    def _hang(self, header: Text) -> Text:
        """`header` wrapped to the block's width with its rest under the name, not back at
        the left edge under the "● " (as is before the first layout, when no width is known)."""
        width = self.size.width - HEADER_INDENT
        if width <= HEADER_INDENT or header.cell_len <= self.size.width or not self.is_attached:
            return header
        rows = header[HEADER_INDENT:].wrap(self.app.console, width)
        out = header[:HEADER_INDENT]
        for index, row in enumerate(rows):
            out.append("\n" + " " * HEADER_INDENT if index else "")
            out.append_text(row)
        return out

    def compose(self):
        yield Static(self._header(), classes="tool-header")
        if self.result is not None:  # from history: no second layout pass for the result
            if not tool_render.one_line(self.result):
                yield self._result_widget()
        else:
            yield Static(self.pending_text, markup=False, classes="tool-running")

    def on_mount(self) -> None:
        self._ready = True

    @property
    def fitted(self) -> bool:
        """Its header and title fit the width it has (they are refitted once it is laid out)."""
        return self.size.width > 0 and self._fitted_width == self.size.width

    def on_resize(self) -> None:
        if self.size.width != self._fitted_width:  # (a taller block, same width: nothing to refit)
            self._fitted_width = self.size.width
            self.query_one(".tool-header", Static).update(self._header())
            self._refit_title()

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
        from textual.widgets import Collapsible

        message = self.result
        assert message is not None
        failed = tool_render.is_error(message)
        self.set_class(failed, "-error")
        self.foldable = True
        diff = tool_render.result_diff(message)
        if (diff is not None and not failed and len(diff.splitlines()) <= DIFF_EXPANDED_MAX_LINES) or (
            diff is None and tool_render.shown_open(message)
        ):
            return Collapsible(self._body(), title=self._title(collapsed=False), collapsed=False)  # type: ignore[arg-type]  # textual takes Content (typed str)
        # Collapsed: the body is built on first expand. Laying out hundreds of hidden
        # outputs made resuming a long session take seconds.
        self._body_pending = True
        return Collapsible(title=self._title(collapsed=True), collapsed=True)  # type: ignore[arg-type]  # textual takes Content (typed str)

    def _title(self, *, collapsed: bool) -> Content:
        """The summary within the row (before the first layout the width is unknown: whole),
        then, when collapsed and the whole line fits, the key that opens it."""
        from textual.content import Content

        width = self.size.width - TITLE_CHROME
        if width <= 0:
            return Content(self.summary)
        if collapsed and tool_render.cells(self.summary) + tool_render.cells(EXPAND_HINT) <= width:
            return Content.assemble(self.summary, (EXPAND_HINT, "dim"))
        return Content(tool_render.fit_line(self.summary, width))

    def _refit_title(self) -> None:
        from textual.widgets import Collapsible

        for collapsible in self.query_children(Collapsible).results(Collapsible):
            collapsible.title = self._title(collapsed=collapsible.collapsed)  # type: ignore[assignment]  # textual takes Content (typed str)

    def _body(self) -> Static:
        message = self.result
        assert message is not None
        diff = tool_render.result_diff(message)
        if diff is not None and not tool_render.is_error(message):
            return Static(diff_text(diff), classes="tool-diff")
        body = tool_render.result_body(message)
        stderr = tool_render.stderr_from(message)
        if stderr is None:
            return Static(body, markup=False, classes="tool-output")
        text = Text()
        for index, line in enumerate(body.split("\n")):  # what the command wrote to stderr: marked
            err = stderr <= index < tool_render.MAX_BODY_LINES
            text.append("\n" if index else "")
            text.append(line, style=STDERR_STYLE if err else "")
        return Static(text, classes="tool-output")

    def on_collapsible_expanded(self, event) -> None:
        self._refit_title()  # open: its hint goes
        if self._body_pending:
            self._body_pending = False
            event.collapsible.query_one("Contents").mount(self._body())

    def on_collapsible_collapsed(self) -> None:
        self._refit_title()  # closed again: the hint is back
