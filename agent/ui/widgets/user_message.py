"""A prompt as the chat shows it: long pasted text collapsed to its first lines.

A 400-line log pasted into the prompt would otherwise push the whole conversation off
screen at every glance back. The model gets the text whole (the chat only shows less);
Ctrl+O (or a click) expands and collapses it, as it does a tool output.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent.fs.terminal_text import inert

PASTE_COLLAPSE_LINES = 20  # longer than this: shown collapsed
PASTE_PREVIEW_LINES = 3


def collapsed_text(text: str) -> Text:
    lines = text.split("\n")
    out = Text(inert("\n".join(lines[:PASTE_PREVIEW_LINES])))
    out.append(f"\n[pasted {len(lines)} lines · Ctrl+O to expand]", style="dim italic")
    return out


class UserMessage(Static):
    def __init__(self, text: str) -> None:
        self.text = text
        self.collapsible = text.count("\n") + 1 > PASTE_COLLAPSE_LINES
        self.collapsed = self.collapsible
        super().__init__(self._shown(), markup=False, classes="user-message")

    def _shown(self) -> Text | str:
        """What the chat draws: the text (collapsed when long), inert: a stored or imported
        prompt, or a paste, may hold escape sequences (agent/fs/terminal_text.py)."""
        return collapsed_text(self.text) if self.collapsed else inert(self.text)

    def toggle(self) -> None:
        """Expand or collapse a long message (a short one has nothing to hide)."""
        if self.collapsible:
            self.collapsed = not self.collapsed
            self.update(self._shown())

    def on_click(self) -> None:
        self.toggle()
