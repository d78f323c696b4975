"""Approval modal: what the agent wants to do; once / always this session / always in
this project / no.

The loop awaits the app's approver, which pushes this screen and resolves a Future in
the dismiss callback; Esc means "no". The choices come from the request: a protected
target (.env, .git/, outside the workspace, a command cairn cannot analyse) offers only
"once" and "no", and the modal says why.
"""

from __future__ import annotations

import asyncio
import re

from rich.cells import cell_len
from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent.tools.permissions import ApprovalRequest, Decision, describe_scopes
from agent.ui.screens.diff_view import NumberedDiff
from agent.ui.screens.docked import PanelBox
from agent.ui.screens.fit import fit_scroll
from agent.ui.screens.scroll_detail import HINT_LINES, DetailScroll, ScrollingQuestion
from agent.ui.widgets.tool_render import inert

# A choice is one row at 80 columns (the panel's text is 76 wide, an option's padding 2): a
# long scope is cut with "…" rather than wrapping "(p)" onto a row of its own.
LABEL_COLUMNS = 72


def _fitted(template: str, scope: str) -> str:
    """`template` with `scope` cut to fit LABEL_COLUMNS; a quoted command is cut inside its
    quotes, so "`python -m pytest tests/…` commands" still reads as a command prefix."""
    room = LABEL_COLUMNS - cell_len(template.format(scope=""))
    if cell_len(scope) > room:
        quoted = re.fullmatch(r"`([^`]*)`( commands)", scope)
        if quoted:
            inner, tail = quoted.groups()
            keep = max(1, room - cell_len(tail) - 3)  # the quotes and the "…"
            scope = f"`{inner[:keep]}…`{tail}"
        else:
            scope = scope[: max(1, room - 1)] + "…"
    return template.format(scope=scope)


def choice_labels(request: ApprovalRequest) -> list[tuple[str, str]]:
    """The options shown, in order, each saying exactly what it allows."""
    scope = inert(describe_scopes(request.scopes)) or "this"
    labels: dict[Decision, str] = {
        "once": "Yes, once  (y)",
        "always": _fitted("Yes, always for {scope} this session  (a)", scope),
        "always_project": _fitted("Yes, always for {scope} in this project  (p)", scope),
        "deny": "No  (n / esc)",
    }
    shown = [(choice, labels[choice]) for choice in labels if choice in request.choices]
    return shown + [(REDIRECT, REDIRECT_LABEL)]


# Not a Decision: a "no" whose words go to the model with the refusal (the app sends them).
REDIRECT = "redirect"
REDIRECT_LABEL = "No, and tell cairn what to do instead  (t)"


MAX_DETAIL_LINES = 20  # a longer diff or command scrolls
MIN_DETAIL_LINES = 1


def _looks_like_diff(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith(("---", "@@", "diff ")) or "\n@@ " in head


class InsteadInput(Input):
    """Where "No, and tell cairn what to do instead" is typed; Esc returns to the choices."""

    BINDINGS = [Binding("escape", "back", "Back to the choices", show=False)]

    def action_back(self) -> None:
        self.value = ""
        screen = self.screen
        assert isinstance(screen, ApprovalScreen)  # the input is the approval's
        screen.back_to_choices()


class ApprovalScreen(ScrollingQuestion[Decision]):
    AUTO_FOCUS = "#approval-choices"
    BOX_ID, HINT_ID, CHOICES_ID = "approval-box", "approval-hint", "approval-choices"
    BINDINGS = [
        Binding("y", "choose('once')", "Yes, once"),
        Binding("a", "choose('always')", "Always"),
        Binding("p", "choose('always_project')", "Always in this project"),
        Binding("n", "choose('deny')", "No"),
        Binding("t", "choose('redirect')", "No, and say what instead"),
        Binding("escape", "choose('deny')", "No"),
    ]

    DEFAULT_CSS = """
    #approval-title { text-wrap: nowrap; text-overflow: ellipsis; }
    #approval-reason { color: $warning; }
    #approval-instead {
        display: none; height: 3; padding: 0 1; border: round $panel-lighten-2; background: transparent;
    }
    #approval-instead:focus { border: round $primary; }
    #approval-hint { display: none; height: 1; color: $text-muted; }
    """

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request
        self.instead = ""  # with "No, and tell cairn…": what the user wants done instead

    def compose(self):
        # Everything shown comes from the model or the files (a command, a diff, a path):
        # control characters become inert symbols so an ESC sequence cannot drive the terminal.
        r = self.request
        detail = inert(r.detail)
        with PanelBox(id="approval-box"):
            title = Text(inert(r.title), style="bold")
            title.append(inert(f"  {r.tool} · {r.kind}"), style="dim")
            yield Static(title, id="approval-title")
            if r.reason:
                yield Static(inert(f"Always asks: {r.reason}."), markup=False, id="approval-reason")
            if r.note:
                yield Static(inert(r.note), markup=False, id="approval-note")
            if detail:
                if _looks_like_diff(detail):
                    body = Static(NumberedDiff(detail), id="approval-detail")
                elif r.kind == "command":
                    body = Static("$ " + detail, markup=False, id="approval-detail")
                else:
                    body = Static(detail, markup=False, id="approval-detail")
                with DetailScroll(id="approval-scroll"):
                    yield body
                yield Static("", markup=False, id="approval-hint")
            yield OptionList(*(Option(label, id=value) for value, label in choice_labels(r)), id="approval-choices")
            yield InsteadInput(
                placeholder="What should cairn do instead? Enter sends, Esc goes back", id="approval-instead"
            )

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Every choice stays on screen: the diff gets the lines left over (it scrolls)."""
        if self.query("#approval-scroll"):
            hint = self.query_one("#approval-hint")
            fit_scroll(
                self,
                self.query_one("#approval-box"),
                self.query_one("#approval-scroll"),
                max_lines=MAX_DETAIL_LINES,
                min_lines=MIN_DETAIL_LINES,
                # Known before it is laid out: the choices must not lose a line to it meanwhile.
                known={hint: HINT_LINES},
                height=self.panel_height(),
            )
            self.call_after_refresh(self.update_hint)

    def refit(self) -> None:
        self._fit()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id is not None:  # always: each choice has its id
            self.action_choose(event.option_id)

    def action_choose(self, decision: str) -> None:
        if decision == REDIRECT:
            self.query_one("#approval-instead", Input).display = True
            self.query_one("#approval-instead", Input).focus()
            self.call_after_refresh(self._fit)  # the input takes a line from the diff
        elif decision in self.request.choices:  # `a`/`p` do nothing where they are not offered
            self.dismiss(decision)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.instead = event.value.strip()
            self.dismiss("deny")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the user types what to do instead, the letters are text, not choices."""
        return not (action == "choose" and isinstance(self.focused, InsteadInput))

    def back_to_choices(self) -> None:
        self.query_one("#approval-instead", Input).display = False
        self.query_one("#approval-choices", OptionList).focus()


async def ask(app: App, request: ApprovalRequest) -> Decision:
    """Push the modal and wait for the choice; an interrupted turn takes the modal down."""
    future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

    def done(decision: Decision | None) -> None:
        if not future.done():
            future.set_result(decision or "deny")

    screen = ApprovalScreen(request)
    app.push_screen(screen, done)
    try:
        decision = await future
        if screen.instead and hasattr(app, "redirect_after_refusal"):
            app.redirect_after_refusal(screen.instead)
        return decision
    finally:
        answered = future.done() and not future.cancelled()
        if not answered and app.screen is screen:
            screen.dismiss("deny")  # the turn was interrupted while asking
