"""A `!command` in the chat: the command, its output as it arrives, then how it ended.

It is the user's own command (agent/runtime/shell.py), so it reads as theirs: `! command`
in the user's colours, the output under it. While it runs, the last lines are redrawn at most
LIVE_HZ times a second however fast it prints; a long output is shown by its last lines, and
a click, or the chat's keys (agent/ui/widgets/block_select.py: Ctrl+O), show it whole (the
model got it whole, up to the note's bound). Once it ended, what
it wrote to stderr is told apart (STDERR_STYLE): the two come on separate pipes, but live they
arrive as one stream, so the marking comes with the stored note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from agent.fs.terminal_text import inert
from agent.ui.widgets.block_select import Foldable, FoldChanged
from agent.ui.widgets.tool_block import STDERR_STYLE

if TYPE_CHECKING:
    from textual.timer import Timer

    from agent.session.models import Message

LIVE_HZ = 10
SHOWN_LINES = 12  # of a finished output, until clicked


def _tail(text: str, lines: int) -> tuple[str, int]:
    """The last `lines` lines of `text` and how many are above them."""
    parts = text.rstrip("\n").split("\n")
    return "\n".join(parts[-lines:]), max(0, len(parts) - lines)


class ShellBlock(Vertical, Foldable):
    def __init__(self, command: str) -> None:
        super().__init__(classes="shell-block")
        self.command = command
        self.output = ""
        self.status = "running…"
        self.finished = False
        self.expanded = False
        self.stderr_from: int | None = None  # the output's first line from stderr (None: none)
        self.fold_hint = ""  # set by the chat: which key shows it all
        self._timer: Timer | None = None

    @classmethod
    def from_note(cls, message: Message) -> ShellBlock:
        """A stored shell note (a resumed session)."""
        from agent.runtime.shell import SHELL_META, shown_streams

        info = message.meta.get(SHELL_META) or {}
        block = cls(str(info.get("command") or ""))
        block.finish(*shown_streams(message), info)
        return block

    @property
    def text(self) -> str:
        """The block as plain text (what tests and a copy read)."""
        return f"! {self.command}\n{self.output}\n{self.status}".strip()

    def compose(self):
        header = Text("! ", style="bold")
        header.append(inert(self.command))
        yield Static(header, classes="shell-command")
        yield Static(self._body(), classes="shell-output")

    def _body(self) -> Text:
        shown, hidden = (self.output.rstrip("\n"), 0) if self.expanded else _tail(self.output, SHOWN_LINES)
        body = Text()
        if hidden:
            more = f" · {self.fold_hint}" if self.finished and self.fold_hint else ""
            body.append(f"… {hidden} more line{'s' * (hidden > 1)} above{more}\n", style="dim italic")
        first = len(self.output.rstrip("\n").split("\n")) - len(shown.split("\n"))  # shown[0]'s index
        for index, line in enumerate(shown.split("\n"), start=first):
            err = self.stderr_from is not None and index >= self.stderr_from
            body.append("\n" if index > first else "")
            body.append(inert(line), style=STDERR_STYLE if err else "")
        if self.status:
            body.append(("\n" if shown or hidden else "") + self.status, style="dim")
        return body

    def add_output(self, text: str) -> None:
        self.output += text
        if self._timer is None and self.is_mounted:
            self._timer = self.set_timer(1 / LIVE_HZ, self._redraw)

    def finish(self, stdout: str, stderr: str, info: dict) -> None:
        """The stored note: its output (bounded, as the model got it), stdout then stderr, and
        how it ended."""
        self.output = "\n".join(part for part in (stdout, stderr) if part)
        self.stderr_from = len(stdout.split("\n")) if stdout and stderr else (0 if stderr else None)
        self.finished = True
        code = info.get("exit_code")
        if info.get("interrupted"):
            self.status = "interrupted"
        elif info.get("timed_out"):
            self.status = "timed out"
        elif code:
            self.status = f"exit code {code}"
        else:
            self.status = "" if self.output.strip() else "(no output)"
        self.set_class(bool(self.status and self.status != "(no output)"), "-error")
        self._ended()

    def stop(self, status: str) -> None:
        """It ended without a note: stopped before it ran, or it could not start."""
        self.finished = True
        self.status = status
        self.add_class("-error")
        self._ended()

    def _ended(self) -> None:
        self._redraw()
        if self.is_attached:
            self.post_message(FoldChanged())  # its output may fold now

    def _redraw(self) -> None:
        self._timer = None
        if self.is_mounted:
            self.query_one(".shell-output", Static).update(self._body())

    def on_click(self) -> None:
        self.toggle_fold()

    # -- the keyboard's side (agent/ui/widgets/block_select.py) ---------------------------
    @property
    def can_fold(self) -> bool:
        """Finished with more lines than it shows (or shown whole already)."""
        return self.finished and (self.expanded or _tail(self.output, SHOWN_LINES)[1] > 0)

    @property
    def folded(self) -> bool:
        return not self.expanded

    def toggle_fold(self) -> None:
        if self.finished:
            self.expanded = not self.expanded
            self._redraw()

    def show_fold_hint(self, hint: str) -> None:
        self.fold_hint = hint
        self._redraw()
