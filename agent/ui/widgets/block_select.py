"""Which folded block of the chat the keyboard reaches, and what each block's hint says.

Every folded block (a tool's output, a `!command`'s long output, the model's thinking, a long
pasted prompt, a condense summary) can be opened from the keyboard, older ones too: Ctrl+O acts
on the *target*, the selected block if one is selected and in view, else the folded block
nearest the bottom of the view (PageUp to a block, then Ctrl+O, opens that one). Ctrl+↑ and
Ctrl+↓ move a selection between blocks (marked by the SELECTED class), scrolling it into view.

A block's hint is true for that block: the target says "Ctrl+O to expand" (or "to collapse"),
a folded block above it "Ctrl+↑ to select", one below it "Ctrl+↓ to select". The hints follow
the view: they are recomputed after a refresh when the chat scrolls, grows, or the selection
or a block's state changes (only the blocks whose hint changed are redrawn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from textual.containers import VerticalScroll
    from textual.geometry import Region
    from textual.screen import Screen
    from textual.widget import Widget

SELECTED = "selected-block"  # app.tcss marks the selected block with it
OPEN_KEY = "Ctrl+O"  # APP_BINDINGS' toggle_output (agent/ui/keys.py)
EARLIER_KEY = "Ctrl+↑"  # APP_BINDINGS' select_block(-1)
LATER_KEY = "Ctrl+↓"  # APP_BINDINGS' select_block(1)


class FoldChanged(Message):
    """Posted by a block whose foldable part came or changed (a result, the end of thinking or
    of a command): the chat recomputes its hints."""


class Foldable:
    """Mixed into a chat block that can hide part of itself: what it offers the keyboard.
    (A plain class, not a Protocol: the chat asks every block at each scroll, and a
    Protocol's isinstance check costs a lookup per member.)"""

    fold_hint = ""  # the hint drawn now ("Ctrl+O to expand"; "" for none)

    @property
    def can_fold(self) -> bool:
        """It has something to hide or show now (a short output has not)."""
        return False

    @property
    def folded(self) -> bool:
        return True

    def toggle_fold(self) -> None:
        """Open it if folded, else fold it."""

    def show_fold_hint(self, hint: str) -> None:
        """Draw `hint` where the block says what it hides."""
        self.fold_hint = hint


def folding(widget: Widget) -> Foldable:
    """`widget` as the block it is (blocks() holds only Foldable ones)."""
    assert isinstance(widget, Foldable)
    return widget


def hint_for(block: Foldable, place: int) -> str:
    """The hint of a block `place` blocks after the target (negative: before it)."""
    if place == 0:
        return f"{OPEN_KEY} to {'expand' if block.folded else 'collapse'}"
    if not block.folded:
        return ""  # open already: nothing to point at
    return f"{EARLIER_KEY if place < 0 else LATER_KEY} to select"


class BlockSelection:
    """The chat's selection and its hints (one per ChatView)."""

    def __init__(self, chat: VerticalScroll) -> None:
        self.chat = chat
        self.selected: Widget | None = None
        self._scheduled_on: Screen | None = None  # the screen a pending recompute waits on

    # -- what is where -----------------------------------------------------------------
    def blocks(self) -> list[Widget]:
        """The chat's foldable blocks, oldest first."""
        return [w for w in self.chat.children if w.display and isinstance(w, Foldable) and w.can_fold]

    def _window(self) -> Region:
        """The part of the chat's content on screen."""
        from textual.geometry import Region

        chat = self.chat
        region = chat.scrollable_content_region
        return Region(0, round(chat.scroll_y), region.width or 1, region.height or 1)

    def _in_view(self, widget: Widget) -> bool:
        return widget.virtual_region.overlaps(self._window())

    def target(self, blocks: list[Widget] | None = None) -> Widget | None:
        """What Ctrl+O acts on: the selection in view, else the newest block in view, else
        the newest block there is."""
        blocks = self.blocks() if blocks is None else blocks
        if not blocks:
            return None
        window = self._window()
        if self.selected is not None and self.selected in blocks and self.selected.virtual_region.overlaps(window):
            return self.selected
        # The newest in view: searched from the newest (the view is mostly at the bottom).
        for widget in reversed(blocks):
            region = widget.virtual_region
            if region.overlaps(window):
                return widget
            if region.bottom <= window.y:
                break  # it and every older block are above the view
        return blocks[-1]

    # -- keys ----------------------------------------------------------------------------
    def toggle_target(self) -> bool:
        """Ctrl+O: open or close the target; False when there is no folded block."""
        target = self.target()
        if target is None:
            return False
        folding(target).toggle_fold()
        self.schedule()
        return True

    def toggle_selected(self) -> bool:
        """Enter: open or close the selected block; False when nothing is selected."""
        selected = self.selected
        if selected is None or selected not in self.blocks():
            return False
        folding(selected).toggle_fold()
        self._reveal(selected)
        self.schedule()
        return True

    def move(self, step: int) -> bool:
        """Ctrl+↑ (-1) / Ctrl+↓ (+1): select the block before / after the target. Past the
        newest the selection ends (Ctrl+O is back on the newest in view). False: nowhere to go."""
        blocks = self.blocks()
        target = self.target(blocks)
        if target is None:
            return False
        index = blocks.index(target) + step
        if index >= len(blocks):
            if self.selected is None:
                return False
            self.select(None)
            self.chat.scroll_end(animate=False)
            self.chat.anchor()
            return True
        if index < 0 and self.selected is blocks[0]:
            return False  # the oldest is selected already
        self.select(blocks[max(index, 0)])
        return True

    def select(self, widget: Widget | None) -> None:
        if self.selected is not None and self.selected is not widget:
            self.selected.remove_class(SELECTED)
        self.selected = widget
        if widget is not None:
            widget.add_class(SELECTED)
            self._reveal(widget)
        self.schedule()

    def clear(self) -> bool:
        """Drop the selection (a prompt was sent, Esc); False when there was none."""
        had = self.selected is not None
        self.select(None)
        return had

    def _reveal(self, widget: Widget) -> None:
        self.chat.release_anchor()  # (scrolling back to the bottom anchors it again)
        self.chat.scroll_to_widget(widget, animate=False, top=widget.outer_size.height > self.chat.size.height)

    # -- hints -----------------------------------------------------------------------------
    def schedule(self) -> None:
        """Recompute the hints once the chat is laid out again (at most one pending).

        Textual runs an after-refresh callback on the screen current when it is asked for: one
        asked while an approval was up was dropped with the approval, and the chat's hints
        then never changed again. So a pending recompute is per screen: asked again once
        another screen is current."""
        if not self.chat.is_attached:
            return
        screen = self.chat.app.screen
        if self._scheduled_on is not screen:
            self._scheduled_on = screen
            self.chat.call_after_refresh(self.update_hints)

    def update_hints(self) -> None:
        self._scheduled_on = None
        blocks = self.blocks()
        selected = self.selected
        if selected is not None and (selected not in blocks or not self._in_view(selected)):
            # Trimmed, cleared, or scrolled out of view: Ctrl+O goes back to what is in view.
            selected.remove_class(SELECTED)
            self.selected = None
        target = self.target(blocks)
        at = blocks.index(target) if target is not None else 0
        for index, widget in enumerate(blocks):
            block = folding(widget)
            hint = hint_for(block, index - at)
            if block.fold_hint != hint:
                block.show_fold_hint(hint)
