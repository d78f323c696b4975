"""A question docked at the bottom of the screen, under the chat it is about.

Claude Code asks inline, under the transcript: the model's explanation and the output it
reacts to stay in sight while the user decides. A centred modal from row 0 to row 23 hid
them at 80×24 (issue 46). So a question is a full-width panel at the bottom, at most the
screen's height less KEEP_CHAT_LINES, and while it is up the chat behind it ends above it
(its bottom margin grows by what the panel covers), so the chat's last lines are the ones
left in view, not lines the panel hides. The margin is given back when the panel goes.
"""

from __future__ import annotations

from typing import TypeVar

from textual.containers import Vertical
from textual.geometry import Spacing
from textual.screen import ModalScreen, Screen
from textual.widget import Widget

ResultT = TypeVar("ResultT")

KEEP_CHAT_LINES = 6  # rows of the chat left above a panel (at 80×24: the panel gets 18)
MIN_PANEL_LINES = 8  # on a tiny terminal the question still shows its choices
CHAT_ID = "chat"  # the chat the panel lifts (agent/ui/app.py composes it)


def panel_lines(screen_height: int) -> int:
    """The most rows a docked question takes on a screen this high."""
    return max(MIN_PANEL_LINES, screen_height - KEEP_CHAT_LINES)


class PanelBox(Vertical):
    """A docked question's box: as its height changes, the chat behind ends above it again."""

    def on_resize(self) -> None:
        if isinstance(self.screen, DockedQuestion):
            self.screen.lift_chat()


class DockedQuestion(ModalScreen[ResultT]):
    """A ModalScreen whose box (a PanelBox, `BOX_ID`) sits at the bottom, full width, the
    chat above it."""

    BOX_ID = ""
    DEFAULT_CSS = """
    DockedQuestion { align: center bottom; background: $background 0%; }
    """

    def __init__(self) -> None:
        super().__init__()
        # The chat, the margin it had, and the rows under it before the panel came.
        self._lifted: tuple[Widget, Spacing, int] | None = None

    def panel_height(self) -> int:
        """Rows the box may take (fit.py fits its scrolling part to this)."""
        return panel_lines(self.size.height)

    def _chat_below(self) -> tuple[Screen, Widget] | None:
        for screen in reversed(self.app.screen_stack[:-1]):
            if not isinstance(screen, ModalScreen):
                chats = screen.query(f"#{CHAT_ID}")
                return (screen, chats.first()) if chats else None
        return None

    def lift_chat(self) -> None:
        """End the chat behind above the box, so its last lines stay in view."""
        if not self.is_attached or not self.BOX_ID or not self.query(f"#{self.BOX_ID}"):
            return
        below = self._chat_below()
        if below is None:
            return
        screen, chat = below
        if self._lifted is None:  # measured once, before any lift: the chat then shrinks by it
            self._lifted = (chat, chat.styles.margin, screen.size.height - chat.region.bottom)
        base, under_chat = self._lifted[1], self._lifted[2]
        covered = self.query_one(f"#{self.BOX_ID}").outer_size.height
        lift = max(0, covered - under_chat)
        wanted = Spacing(base.top, base.right, base.bottom + lift, base.left)
        if chat.styles.margin != wanted:
            chat.styles.margin = wanted

    def on_unmount(self) -> None:
        if self._lifted is not None:
            chat, margin, _ = self._lifted
            self._lifted = None
            if chat.is_attached:
                chat.styles.margin = margin
