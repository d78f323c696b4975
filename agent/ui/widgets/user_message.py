"""A prompt as the chat shows it: long pasted text collapsed to its first lines.

A 400-line log pasted into the prompt would otherwise push the whole conversation off
screen at every glance back. The model gets the text whole (the chat only shows less); a
click, or the chat's keys (agent/ui/widgets/block_select.py: Ctrl+O), expand and collapse it,
as they do a tool output.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent.fs.terminal_text import inert
from agent.ui.widgets.block_select import Foldable

PASTE_COLLAPSE_LINES = 20  # longer than this: shown collapsed
PASTE_PREVIEW_LINES = 3


def collapsed_text(text: str, hint: str = "") -> Text:
    """The first lines, then `[pasted N lines · hint]` (the hint: which key opens it)."""
    lines = text.split("\n")
    out = Text(inert("\n".join(lines[:PASTE_PREVIEW_LINES])))
    out.append(f"\n[pasted {len(lines)} lines{' · ' + hint if hint else ''}]", style="dim italic")
    return out


class UserMessage(Static, Foldable):
    def __init__(self, text: str) -> None:
        self.text = text
        self.collapsible = text.count("\n") + 1 > PASTE_COLLAPSE_LINES
        self.collapsed = self.collapsible
        self.fold_hint = ""  # set by the chat: which key opens it
        super().__init__(self._shown(), markup=False, classes="user-message")

    def _shown(self) -> Text | str:
        """What the chat draws: the text (collapsed when long), inert: a stored or imported
        prompt, or a paste, may hold escape sequences (agent/fs/terminal_text.py)."""
        return collapsed_text(self.text, self.fold_hint) if self.collapsed else inert(self.text)

    def toggle(self) -> None:
        """Expand or collapse a long message (a short one has nothing to hide)."""
        if self.collapsible:
            self.collapsed = not self.collapsed
            self.update(self._shown())

    def on_click(self) -> None:
        self.toggle()

    # -- the keyboard's side (agent/ui/widgets/block_select.py) ---------------------------
    @property
    def can_fold(self) -> bool:
        return self.collapsible

    @property
    def folded(self) -> bool:
        return self.collapsed

    def toggle_fold(self) -> None:
        self.toggle()

    def show_fold_hint(self, hint: str) -> None:
        self.fold_hint = hint
        if self.collapsed:
            self.update(self._shown())
