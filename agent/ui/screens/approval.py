"""Approval modal: what the agent wants to do, and once / always this session / no.

The loop awaits the app's approver, which pushes this screen and resolves a Future in
the dismiss callback; Esc means "no".
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.tools.permissions import ApprovalRequest, Decision
from agent.ui.widgets.chat import diff_text

CHOICES: list[tuple[Decision, str]] = [
    ("once", "Yes, once  (y)"),
    ("always", "Yes, always this session  (a)"),
    ("deny", "No  (n / esc)"),
]


def _looks_like_diff(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith(("---", "@@", "diff ")) or "\n@@ " in head


class ApprovalScreen(ModalScreen[Decision]):
    AUTO_FOCUS = "#approval-choices"
    BINDINGS = [
        Binding("y", "choose('once')", "Yes, once"),
        Binding("a", "choose('always')", "Always"),
        Binding("n", "choose('deny')", "No"),
        Binding("escape", "choose('deny')", "No"),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self):
        r = self.request
        with Vertical(id="approval-box"):
            yield Static(r.title, markup=False, id="approval-title")
            yield Static(f"{r.tool} · {r.kind}", markup=False, id="approval-tool")
            if r.detail:
                if _looks_like_diff(r.detail):
                    body = Static(diff_text(r.detail), id="approval-detail")
                elif r.kind == "command":
                    body = Static("$ " + r.detail, markup=False, id="approval-detail")
                else:
                    body = Static(r.detail, markup=False, id="approval-detail")
                with VerticalScroll(id="approval-scroll"):
                    yield body
            yield OptionList(*(Option(label, id=value) for value, label in CHOICES), id="approval-choices")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_id)

    def action_choose(self, decision: Decision) -> None:
        self.dismiss(decision)


async def ask(app: App, request: ApprovalRequest) -> Decision:
    """Push the modal and wait for the choice; an interrupted turn takes the modal down."""
    future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

    def done(decision: Decision | None) -> None:
        if not future.done():
            future.set_result(decision or "deny")

    screen = ApprovalScreen(request)
    app.push_screen(screen, done)
    try:
        return await future
    finally:
        answered = future.done() and not future.cancelled()
        if not answered and app.screen is screen:
            screen.dismiss("deny")  # the turn was interrupted while asking
