"""One tool call in the chat: its header, live output while it runs, then its result.

A result is collapsed unless it is a short diff (its body is built on first expand:
laying out hundreds of hidden outputs made resuming a long session take seconds). While
a command runs, the last lines it printed show under the header, redrawn at most LIVE_HZ
times a second however fast it prints; an interrupt leaves them there.

A collapsed result is one line, fitted to the row: a summary too long for it ends in `…`
(the row's edge would cut it mid-word with no sign). Where the row has room, it ends in the
hint the chat gives it (agent/ui/widgets/block_select.py: "Ctrl+O to expand" on the block that
key opens, "Ctrl+↑ to select" on the others), true for that block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from agent.ui.widgets import tool_render
from agent.ui.widgets.block_select import Foldable, FoldChanged

if TYPE_CHECKING:
    from textual.content import Content
    from textual.timer import Timer
    from textual.widgets import Collapsible

    from agent.session.models import Message, ToolCall

DIFF_EXPANDED_MAX_LINES = 40
LIVE_TAIL_LINES = 8  # of a running command's output
LIVE_HZ = 10
HINT_SEP = " · "  # between a collapsed title's summary and its key hint
TITLE_CHROME = 4 + 2  # a collapsed title's padding (app.tcss: `0 2`) and its "▶ " symbol
STDERR_STYLE = "red"  # a command's stderr lines in its expanded output (as in a `!command`'s)
HEADER_INDENT = 2  # a header too long for its row goes on under the name, past the "● "
SUBAGENT = "subagent"  # its live lines are its child's calls (agent/turn/children.py)
CHILD_CALL_MARK = "    · "  # before each of a running child's calls
CHILD_FAILED_STYLE = "red"  # a child's call that was refused or failed
MARKDOWN_RESULTS = frozenset({SUBAGENT, tool_render.EXIT_PLAN_MODE})  # results the model wrote as Markdown


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


def _child_lines(lines: list[str]) -> Text:
    """A running subagent's progress lines: its calls as the parent's read (`terminal-execute
    $ git log`), one refused or failed marked ✗ and red with why, other lines as they came."""
    rows: list[Text] = []
    for line in lines:
        failure = tool_render.child_failure(line)
        if failure is not None and rows and rows[-1].plain.startswith(CHILD_CALL_MARK):
            call = rows[-1]
            rows[-1] = Text.assemble(
                ("    " + tool_render.CHILD_FAILED_MARK, CHILD_FAILED_STYLE), call[len(CHILD_CALL_MARK) - 1 :]
            )
            rows[-1].append(f" · {failure}", style=CHILD_FAILED_STYLE)
            continue
        pretty = tool_render.child_call(line)
        if pretty is not None:
            rows.append(Text(CHILD_CALL_MARK + pretty))
        elif failure is not None:
            rows.append(Text(f"    {tool_render.CHILD_FAILED_MARK} {failure}", style=CHILD_FAILED_STYLE))
        else:
            rows.append(Text("    " + tool_render.inert(line)))
    # One row each, cut with `…` at the edge (app.tcss: `.-subagent .tool-running`): wrapped,
    # a long command ran back to the left edge.
    return Text("\n").join(rows)


class ToolBlock(Vertical, Foldable):
    """One tool call: `name args` header, then a collapsed result with a one-line summary."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(classes="tool-block -subagent" if call.name == SUBAGENT else "tool-block")
        self.call = call
        self.summary = ""
        self.result: Message | None = None
        self._ready = False
        self._body_pending = False
        self.pending_text: Text | str = "  ⎿ running…"
        self.live: list[str] = []  # output arrived since the last redraw
        self._tail = ""  # the last lines of output so far
        self._live_timer: Timer | None = None
        self.foldable = False  # its result sits in a Collapsible (Ctrl+O can open or close it)
        self._fold: Collapsible | None = None  # that Collapsible
        self._fitted_width = 0  # the width the header and the title were last fitted to
        self.fold_hint = ""  # set by the chat (block_select.py): which key reaches this block

    def _header(self) -> Text:
        header = Text()
        header.append("● ", style="dim")
        header.append(tool_render.inert(self.call.name), style="bold")
        args = tool_render.format_args(self.call)
        if args:
            header.append(" " + args)
        ran = tool_render.where_it_ran(self.result) if self.result is not None else ""
        if ran:  # a command: in cairn's sandbox, or with the user's access
            header.append(" · " + ran, style="dim")
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
        self.pending_text = Text.assemble(self._live_text(), "\n", text) if self._tail else text
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
            self.pending_text = Text.assemble(self._live_text(), "\n  ⎿ running…")
            self._show_pending()

    def _live_text(self) -> Text:
        shown = self._tail.rstrip("\n").split("\n")[-LIVE_TAIL_LINES:]
        if self.call.name == SUBAGENT:
            return _child_lines(shown)
        return Text("\n".join("    " + tool_render.inert(line) for line in shown))

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
                self.post_message(FoldChanged())

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
            self._fold = Collapsible(self._body(), title=self._title(collapsed=False), collapsed=False)  # type: ignore[arg-type]  # textual takes Content (typed str)
            return self._fold
        # Collapsed: the body is built on first expand. Laying out hundreds of hidden
        # outputs made resuming a long session take seconds.
        self._body_pending = True
        self._fold = Collapsible(title=self._title(collapsed=True), collapsed=True)  # type: ignore[arg-type]  # textual takes Content (typed str)
        return self._fold

    def _title(self, *, collapsed: bool) -> Content:
        """The summary within the row (before the first layout the width is unknown: whole),
        then, when the whole line fits, the chat's hint for it."""
        from textual.content import Content

        width = self.size.width - TITLE_CHROME
        if width <= 0:
            return Content(self.summary)
        hint = HINT_SEP + self.fold_hint if self.fold_hint else ""
        if tool_render.cells(self.summary) + tool_render.cells(hint) <= width:
            return Content.assemble(self.summary, (hint, "dim"))
        return Content(tool_render.fit_line(self.summary, width))

    def _refit_title(self) -> None:
        for collapsible in self._collapsibles():
            collapsible.title = self._title(collapsed=collapsible.collapsed)  # type: ignore[assignment]  # textual takes Content (typed str)

    def _collapsibles(self) -> list[Collapsible]:
        from textual.widgets import Collapsible

        return list(self.query_children(Collapsible).results(Collapsible))

    # -- the keyboard's side (agent/ui/widgets/block_select.py) ---------------------------
    @property
    def can_fold(self) -> bool:
        return self.foldable  # (asked of every block as the chat scrolls: no query here)

    @property
    def folded(self) -> bool:
        return self._fold is None or self._fold.collapsed

    def toggle_fold(self) -> None:
        if self._fold is not None:
            self._fold.collapsed = not self._fold.collapsed

    def show_fold_hint(self, hint: str) -> None:
        self.fold_hint = hint
        self._refit_title()

    def _body(self) -> Widget:
        message = self.result
        assert message is not None
        diff = tool_render.result_diff(message)
        if diff is not None and not tool_render.is_error(message):
            return Static(diff_text(diff), classes="tool-diff")
        body = tool_render.result_body(message)
        if self.call.name in MARKDOWN_RESULTS and not tool_render.is_error(message):
            # A child's answer, a plan: Markdown the model wrote, drawn as the chat draws answers.
            from textual.widgets import Markdown

            from agent.ui.widgets.answer_markdown import text_only_markdown

            return Markdown(body, parser_factory=text_only_markdown, classes="tool-markdown")
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
        self._refit_title()
        if self._body_pending:
            self._body_pending = False
            event.collapsible.query_one("Contents").mount(self._body())

    def on_collapsible_collapsed(self) -> None:
        self._refit_title()
