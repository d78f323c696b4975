"""Approval modal: what the agent wants to do; once / always this session / always in
this project / no.

The loop awaits the app's approver, which pushes this screen and resolves a Future in
the dismiss callback; Esc means "no". The choices come from the request: a protected
target (.env, .git/, outside the workspace, a command cairn cannot analyse) offers only
"once" and "no", and the modal says why.
"""

from __future__ import annotations

import asyncio

from textual.actions import SkipAction
from textual.app import App
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent.tools.permissions import ApprovalRequest, Decision, describe_scopes
from agent.ui.screens.fit import fit_scroll
from agent.ui.widgets.chat import diff_text
from agent.ui.widgets.tool_render import inert


def choice_labels(request: ApprovalRequest) -> list[tuple[str, str]]:
    """The options shown, in order, each saying exactly what it allows."""
    scope = inert(describe_scopes(request.scopes)) or "this"
    labels: dict[Decision, str] = {
        "once": "Yes, once  (y)",
        "always": f"Yes, and don't ask again this session for {scope}  (a)",
        "always_project": f"Yes, and don't ask again in this project for {scope}  (p)",
        "deny": "No  (n / esc)",
    }
    shown = [(choice, labels[choice]) for choice in labels if choice in request.choices]
    return shown + [(REDIRECT, REDIRECT_LABEL)]


# Not a Decision: a "no" whose words go to the model with the refusal (the app sends them).
REDIRECT = "redirect"
REDIRECT_LABEL = "No, and tell cairn what to do instead  (t)"


MAX_DETAIL_LINES = 20  # a longer diff or command scrolls
MIN_DETAIL_LINES = 1
HINT_LINES = 1  # the scroll hint's line, under the diff
# The keys that scroll the diff while the choices keep the focus: the modal's own (priority,
# or the choice list would take PageDown as "last choice"). Up/Down only from the first
# choice, so arrows still walk the choices once the diff is read.
SCROLL_KEYS = [  # no descriptions: the scroll hint under the diff says them where they apply
    Binding("pagedown", "scroll_detail('page_down')", show=False, priority=True),
    Binding("pageup", "scroll_detail('page_up')", show=False, priority=True),
    Binding("home", "scroll_detail('home')", show=False, priority=True),
    Binding("end", "scroll_detail('end')", show=False, priority=True),
    Binding("down", "scroll_detail('down')", show=False, priority=True),
    Binding("up", "scroll_detail('up')", show=False, priority=True),
]


def scroll_hint(below: int, above: int) -> str:
    """What the line under a diff that does not fit says: what is hidden, and the keys."""
    if below > 0:
        return f"↓ {below} more lines · PgDn/↓ to scroll"
    if above > 0:
        return f"↑ {above} lines above · PgUp/↑ to scroll back"
    return ""


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


class DetailScroll(VerticalScroll, can_focus=False):
    """The diff or command: scrolled by the modal's keys (the choices keep the focus, so
    nothing invisible holds it), its hint kept up to date as it moves."""

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._tell()

    def on_resize(self) -> None:
        self.call_after_refresh(self._tell)  # fitted to the screen: what is hidden changed

    def _tell(self) -> None:
        if self.is_attached and isinstance(self.screen, ApprovalScreen):
            self.screen.update_hint()


class ApprovalScreen(ModalScreen[Decision]):
    AUTO_FOCUS = "#approval-choices"
    BINDINGS = [
        *SCROLL_KEYS,
        Binding("y", "choose('once')", "Yes, once"),
        Binding("a", "choose('always')", "Always"),
        Binding("p", "choose('always_project')", "Always in this project"),
        Binding("n", "choose('deny')", "No"),
        Binding("t", "choose('redirect')", "No, and say what instead"),
        Binding("escape", "choose('deny')", "No"),
    ]

    DEFAULT_CSS = """
    #approval-reason { color: $warning; margin: 0 0 1 0; }
    #approval-instead { display: none; }
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
        with Vertical(id="approval-box"):
            yield Static(inert(r.title), markup=False, id="approval-title")
            yield Static(inert(f"{r.tool} · {r.kind}"), markup=False, id="approval-tool")
            if r.reason:
                yield Static(inert(f"Always asks: {r.reason}."), markup=False, id="approval-reason")
            if r.note:
                yield Static(inert(r.note), markup=False, id="approval-note")
            if detail:
                if _looks_like_diff(detail):
                    body = Static(diff_text(detail), id="approval-detail")
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
            )
            self.call_after_refresh(self.update_hint)

    def update_hint(self) -> None:
        """Under a diff that does not fit: how many lines are hidden and how to see them
        (it takes a line of its own, so the diff is fitted again when it appears or goes)."""
        scrolls, hints = self.query(DetailScroll), self.query("#approval-hint").results(Static)
        hint = next(hints, None)
        if not scrolls or hint is None:
            return  # still being mounted: asked again once it is laid out
        scroll = scrolls.first()
        below = max(0, round(scroll.max_scroll_y - scroll.scroll_y))
        text = scroll_hint(below, round(scroll.scroll_y))
        shown = bool(text)
        hint.update(text)
        if shown != hint.display:
            hint.display = shown
            self.call_after_refresh(self._fit)

    def action_scroll_detail(self, where: str) -> None:
        """PageUp/PageDown/Home/End scroll the diff; Up/Down do while the first choice is
        highlighted and the diff has more that way, else they move through the choices."""
        scrolls = self.query(DetailScroll)
        typing = isinstance(self.focused, InsteadInput)
        if not scrolls or (typing and where in ("home", "end", "up", "down")):
            raise SkipAction()  # the input's own cursor keys, or the choices'
        scroll = scrolls.first()
        if where in ("up", "down"):
            first = self.query_one("#approval-choices", OptionList).highlighted in (None, 0)
            room = scroll.scroll_y < scroll.max_scroll_y if where == "down" else scroll.scroll_y > 0
            if not (first and room):
                raise SkipAction()
        actions = {
            "page_down": scroll.scroll_page_down,
            "page_up": scroll.scroll_page_up,
            "home": scroll.scroll_home,
            "end": scroll.scroll_end,
            "down": scroll.scroll_down,
            "up": scroll.scroll_up,
        }
        actions[where](animate=False)

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
