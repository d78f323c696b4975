"""A stored conversation to read, full screen: a subagent's transcript (`/agents N`).

Read-only by design: a subagent's session is the record of work done for another
conversation, not one to continue, so there is no prompt here; Esc or q closes.

Drawn as the main chat draws a turn, not as an export file: the task and answers as Markdown,
each call on one line (`● terminal-execute $ grep -rn want_bytes src`), each result under it
wrapped with a hanging indent (`  ⎿ exit 0 · 3 lines`, then its lines), so a long line of output
or an error reads whole at 80 columns instead of being cut at the screen's edge. Store ids
(the session's, the parent's call) are not shown: they mean nothing to the reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Markdown, Static

from agent.fs.terminal_text import inert
from agent.ui.widgets.answer_markdown import text_only_markdown
from agent.ui.widgets.hanging import Hanging
from agent.ui.widgets.tool_render import format_args, is_error, one_line, result_body, summarize_result

if TYPE_CHECKING:
    from agent.session.models import Message

RESULT_INDENT = 4  # a result's lines continue under its text, past the `  ⎿ `
HINT = "↑↓ PageUp/PageDown scroll · Esc close  (read-only: the subagent's own conversation)"


def transcript_widgets(messages: list[Message]) -> list[Widget]:
    """The conversation as the chat draws it, each call with its result right under it
    (parallel calls too). Inert: the model's and the tools' words."""
    results = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    shown: set[str] = set()
    out: list[Widget] = []
    for message in messages:
        if message.role == "user":
            out.append(_markdown(f"**Task:** {message.content or ''}"))
        elif message.role == "assistant":
            if (message.content or "").strip():
                out.append(_markdown(message.content or ""))
            for call in message.tool_calls:
                out.append(
                    Static(Hanging([(f"● {call.name} {format_args(call)}".rstrip(), 2)]), classes="transcript-call")
                )
                result = results.get(call.id)
                if result is not None:
                    out.append(_result(result))
                    shown.add(call.id)
        elif message.role == "tool" and message.tool_call_id not in shown:
            out.append(_result(message))  # its call is not on this path: shown where it was stored
    return out


def _markdown(text: str) -> Markdown:
    return Markdown(inert(text), parser_factory=text_only_markdown)


def _result(message: Message) -> Static:
    rows = [(f"  ⎿ {summarize_result(message)}", RESULT_INDENT)]
    if not one_line(message):  # else the summary is all there is (a one-line error whole)
        body = result_body(message)
        rows += [("    " + line, RESULT_INDENT) for line in body.split("\n") if body]
    return Static(Hanging(rows), classes="transcript-result" + (" -error" if is_error(message) else ""))


class TranscriptScreen(ModalScreen[None]):
    AUTO_FOCUS = "#transcript-scroll"
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, title: str, messages: list[Message], *, facts: str = "") -> None:
        super().__init__()
        self.title_text = inert(title)  # the model's words (the task it gave)
        self.facts = facts
        self.messages = messages

    def compose(self):
        with Vertical(id="transcript-box"):
            yield Static(self.title_text, id="transcript-title", markup=False)
            if self.facts:
                yield Static(self.facts, id="transcript-facts", markup=False)
            with VerticalScroll(id="transcript-scroll"):
                yield from transcript_widgets(self.messages)
            yield Static(HINT, id="transcript-hint", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
