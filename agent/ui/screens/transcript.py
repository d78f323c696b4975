"""A stored conversation to read, full screen: a subagent's transcript (`/agents`).

Read-only by design: a subagent's session is the record of work done for another
conversation, not one to continue, so there is no prompt here; Esc or q closes.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from agent.fs.terminal_text import inert
from agent.ui.widgets.answer_markdown import text_only_markdown


class TranscriptScreen(ModalScreen[None]):
    AUTO_FOCUS = "#transcript-scroll"
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, title: str, markdown: str) -> None:
        super().__init__()
        self.title_text = inert(title)  # the model's words (the task it gave), and its answers
        self.markdown = inert(markdown)

    def compose(self):
        with Vertical(id="transcript-box"):
            yield Static(self.title_text, id="transcript-title", markup=False)
            with VerticalScroll(id="transcript-scroll"):
                yield Markdown(self.markdown, id="transcript-body", parser_factory=text_only_markdown)
            yield Static(
                "↑↓ PageUp/PageDown scroll · Esc close  (read-only: the subagent's own conversation)",
                id="transcript-hint",
                markup=False,
            )

    def action_close(self) -> None:
        self.dismiss(None)
