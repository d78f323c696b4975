"""The scrolling part of a question (an approval's diff, the plan under review) and its keys.

A question's choices keep the focus, so the part to read is scrolled by the screen's own
priority keys (the choice list would take PageDown as "last choice"): PageUp/PageDown/Home/End
always, Up/Down while the default choice is still highlighted and there is more that way, so
arrows walk the choices once the text is read. A line under it says how much is hidden and
which keys show it. The approval and the plan review share this, so both scroll alike
(issue 32 made the approval scroll; the plan review could not until Tab, issue 46).
"""

from __future__ import annotations

from typing import TypeVar

from textual.actions import SkipAction
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Input, OptionList, Static

from agent.ui.screens.docked import DockedQuestion

ResultT = TypeVar("ResultT")

HINT_LINES = 1  # the scroll hint's line, under the text
# No descriptions: the scroll hint under the text says them where they apply.
SCROLL_KEYS: list[Binding | tuple[str, str] | tuple[str, str, str]] = [
    Binding("pagedown", "scroll_detail('page_down')", show=False, priority=True),
    Binding("pageup", "scroll_detail('page_up')", show=False, priority=True),
    Binding("home", "scroll_detail('home')", show=False, priority=True),
    Binding("end", "scroll_detail('end')", show=False, priority=True),
    Binding("down", "scroll_detail('down')", show=False, priority=True),
    Binding("up", "scroll_detail('up')", show=False, priority=True),
]


def scroll_hint(below: int, above: int) -> str:
    """What the line under a text that does not fit says: what is hidden, and the keys."""
    if below > 0:
        return f"↓ {below} more lines · PgDn/↓ to scroll"
    if above > 0:
        return f"↑ {above} lines above · PgUp/↑ to scroll back"
    return ""


class DetailScroll(VerticalScroll, can_focus=False):
    """The text to read: scrolled by the screen's keys (the choices keep the focus, so
    nothing invisible holds it), its hint kept up to date as it moves."""

    furthest = 0.0  # the furthest it was scrolled: has the reader been to the end?

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self.furthest = max(self.furthest, new)
        self._tell()

    @property
    def read_to_end(self) -> bool:
        return self.furthest >= self.max_scroll_y

    def on_resize(self) -> None:
        self.call_after_refresh(self._tell)  # fitted to the screen: what is hidden changed

    def _tell(self) -> None:
        if self.is_attached and isinstance(self.screen, ScrollingQuestion):
            self.screen.update_hint()


class ScrollingQuestion(DockedQuestion[ResultT]):
    """A docked question with a DetailScroll, a hint line (HINT_ID) and choices (CHOICES_ID).

    Subclasses fit the scroll to the screen in `refit` and say which choice is the default
    (`DEFAULT_CHOICE`: where Up/Down scroll rather than move)."""

    BINDINGS = SCROLL_KEYS
    HINT_ID = ""
    CHOICES_ID = ""
    DEFAULT_CHOICE = 0

    def refit(self) -> None:
        """Size the scroll again (the hint took or gave back a line)."""

    def unread_lines(self) -> int:
        """Lines of the text below what is shown (0: read to its end, or none)."""
        scrolls = self.query(DetailScroll)
        if not scrolls:
            return 0
        scroll = scrolls.first()
        return max(0, round(scroll.max_scroll_y - scroll.scroll_y))

    def update_hint(self) -> None:
        """How many lines are hidden and how to see them (the hint takes a line of its own,
        so the scroll is fitted again when it appears or goes)."""
        scrolls, hints = self.query(DetailScroll), self.query(f"#{self.HINT_ID}").results(Static)
        hint = next(hints, None)
        if not scrolls or hint is None:
            return  # still being mounted: asked again once it is laid out
        scroll = scrolls.first()
        text = scroll_hint(self.unread_lines(), round(scroll.scroll_y))
        shown = bool(text)
        hint.update(text)
        if shown != hint.display:
            hint.display = shown
            self.call_after_refresh(self.refit)

    def action_scroll_detail(self, where: str) -> None:
        """PageUp/PageDown/Home/End scroll the text; Up/Down do while the default choice is
        highlighted and the text has more that way, else they move through the choices."""
        scrolls = self.query(DetailScroll)
        typing = isinstance(self.focused, Input)
        if not scrolls or (typing and where in ("home", "end", "up", "down")):
            raise SkipAction()  # the input's own cursor keys, or the choices'
        scroll = scrolls.first()
        if where in ("up", "down"):
            highlighted = self.query_one(f"#{self.CHOICES_ID}", OptionList).highlighted
            at_default = highlighted in (None, self.DEFAULT_CHOICE)
            room = scroll.scroll_y < scroll.max_scroll_y if where == "down" else scroll.scroll_y > 0
            if not (at_default and room):
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
