"""exit-plan-mode's review: the model's plan, and what the user makes of it.

Three answers, as Claude Code gives them: approve and let file edits run unasked, approve
and keep asking before each edit (highlighted: the cautious one), or keep planning and say
what should change (typed in the input that opens). Esc keeps planning without a word. The
plan is Markdown the model wrote: its control characters are made inert before it is
rendered, and it scrolls in what the terminal leaves once the choices are shown (fit.py),
with the approval's keys and hint (scroll_detail.py): PgDn/PgUp/Home/End, and ↓/↑ while the
highlighted default is unmoved.

A plan cannot be approved unread by a habitual Enter: while part of it was never shown,
Enter on a "Yes" reads on (a page down) instead of approving; the letters `a` and `y` are
deliberate and approve at once, and "No, keep planning" is always one Enter away.
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.binding import Binding
from textual.widgets import Input, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from agent.tools.modes import PlanReview
from agent.ui.screens.docked import PanelBox
from agent.ui.screens.fit import fit_scroll
from agent.ui.screens.scroll_detail import HINT_LINES, DetailScroll, ScrollingQuestion
from agent.ui.widgets.answer_markdown import text_only_markdown
from agent.ui.widgets.tool_render import inert

KEEP_PLANNING = "plan"
CHOICES: list[tuple[str, str]] = [
    ("acceptEdits", "Yes, and auto-accept edits  (a)"),
    ("default", "Yes, and ask before edits  (y)"),
    (KEEP_PLANNING, "No, keep planning  (n)"),
]
DEFAULT_CHOICE = 1  # "Yes, and ask before edits"
MAX_PLAN_LINES = 40
MIN_PLAN_LINES = 3


class FeedbackInput(Input):
    """Where "No, keep planning" says what should change; Esc returns to the choices."""

    BINDINGS = [Binding("escape", "back", "Back to the choices", show=False)]

    def action_back(self) -> None:
        self.value = ""
        screen = self.screen
        assert isinstance(screen, PlanReviewScreen)  # the input is the review's
        screen.back_to_choices()


class PlanReviewScreen(ScrollingQuestion[PlanReview]):
    AUTO_FOCUS = "#plan-choices"
    BOX_ID, HINT_ID, CHOICES_ID = "plan-box", "plan-hint", "plan-choices"
    DEFAULT_CHOICE = DEFAULT_CHOICE
    BINDINGS = [
        Binding("a", "choose('acceptEdits')", "Yes, and auto-accept edits"),
        Binding("y", "choose('default')", "Yes, and ask before edits"),
        Binding("n", "choose('plan')", "No, keep planning (say what to change)"),
        Binding("escape", "keep_planning", "No, keep planning"),
    ]

    DEFAULT_CSS = """
    PlanReviewScreen { align: center bottom; background: $background 0%; }
    #plan-box {
        width: 100%; height: auto; max-height: 100%;
        padding: 0 1; border-top: solid $accent; background: $surface;
    }
    #plan-title { text-style: bold; }
    #plan-scroll { height: auto; max-height: 40; background: $boost; padding: 0 1; }
    #plan-body { margin: 0; padding: 0; background: transparent; }
    #plan-body MarkdownH1, #plan-body MarkdownH2, #plan-body MarkdownH3 { margin: 0 0 1 0; }  /* rows are scarce */
    #plan-hint { display: none; height: 1; color: $text-muted; }
    #plan-choices { height: auto; border: none; background: transparent; }
    #plan-feedback {
        display: none; height: 3; padding: 0 1; border: round $panel-lighten-2; background: transparent;
    }
    #plan-feedback:focus { border: round $primary; }
    """

    def __init__(self, plan: str) -> None:
        super().__init__()
        self.plan = plan

    def compose(self):
        with PanelBox(id="plan-box"):
            yield Static("Ready to code? Here is cairn's plan:", id="plan-title")
            with DetailScroll(id="plan-scroll"):
                yield Markdown(inert(self.plan), id="plan-body", parser_factory=text_only_markdown)
            yield Static("", markup=False, id="plan-hint")
            yield OptionList(*(Option(label, id=value) for value, label in CHOICES), id="plan-choices")
            yield FeedbackInput(
                placeholder="What should change in the plan? Enter sends, Esc goes back", id="plan-feedback"
            )

    def on_mount(self) -> None:
        self.query_one("#plan-choices", OptionList).highlighted = DEFAULT_CHOICE
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Every choice stays on screen: the plan gets the lines left over (it scrolls)."""
        fit_scroll(
            self,
            self.query_one("#plan-box"),
            self.query_one("#plan-scroll"),
            max_lines=MAX_PLAN_LINES,
            min_lines=MIN_PLAN_LINES,
            known={self.query_one("#plan-hint"): HINT_LINES},
            height=self.panel_height(),
        )
        self.call_after_refresh(self.update_hint)

    def refit(self) -> None:
        self._fit()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter: a "Yes" on a plan not yet read to its end reads on instead (a page)."""
        event.stop()
        scroll = self.query_one("#plan-scroll", DetailScroll)
        if event.option_id != KEEP_PLANNING and not scroll.read_to_end:
            scroll.scroll_page_down(animate=False)
            return
        if event.option_id is not None:  # always: each choice has its id
            self.action_choose(event.option_id)

    def action_choose(self, choice: str) -> None:
        if choice == KEEP_PLANNING:
            feedback = self.query_one("#plan-feedback", Input)
            feedback.display = True
            feedback.focus()
            self.call_after_refresh(self._fit)  # the input takes a line from the plan
        elif choice in ("acceptEdits", "default"):
            self.dismiss(PlanReview(approved=True, mode=choice))  # type: ignore[arg-type]  # one of the two

    def action_keep_planning(self) -> None:
        self.dismiss(PlanReview(approved=False))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(PlanReview(approved=False, feedback=event.value.strip()))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the user types the feedback, the letters are text, not choices."""
        return not (action in ("choose", "keep_planning") and isinstance(self.focused, FeedbackInput))

    def back_to_choices(self) -> None:
        self.query_one("#plan-feedback", Input).display = False
        self.query_one("#plan-choices", OptionList).focus()


async def review(app: App, plan: str) -> PlanReview:
    """Push the review and wait for the answer; an interrupted turn takes it down."""
    future: asyncio.Future[PlanReview] = asyncio.get_running_loop().create_future()

    def done(answer: PlanReview | None) -> None:
        if not future.done():
            future.set_result(answer or PlanReview(approved=False))

    screen = PlanReviewScreen(plan)
    app.push_screen(screen, done)
    try:
        return await future
    finally:
        answered = future.done() and not future.cancelled()
        if not answered and app.screen is screen:
            screen.dismiss(PlanReview(approved=False))  # the turn was interrupted while asking
