"""Messages sent while the agent works: shown above the prompt, sent when the turn ends.

Queued rather than refused, so typing ahead never waits on the agent; above the prompt
rather than in the chat, because the answer still streaming there would otherwise land
below a message the model has not seen yet. Up in an empty prompt takes the newest one back
for editing; an interrupted turn (Esc) gives them all back to the prompt, where Enter
sends them at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

from agent.ui.widgets.tool_render import inert

PREVIEW_CHARS = 200


@dataclass(frozen=True)
class Queued:
    shown: str  # what the user typed (`/name args` for a project command)
    sent: str | None  # what the model gets when it differs (the command's expansion)


class QueuedPrompts(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.items: list[Queued] = []
        self.display = False

    def add(self, shown: str, sent: str | None = None) -> None:
        self.items.append(Queued(shown, sent))
        self._redraw()

    def take_last(self) -> Queued | None:
        item = self.items.pop() if self.items else None
        self._redraw()
        return item

    def take_first(self) -> Queued:
        item = self.items.pop(0)
        self._redraw()
        return item

    def take_until(self, stop: Callable[[Queued], bool]) -> list[Queued]:
        """The items before the first one `stop` holds for (all of them when none)."""
        end = next((i for i, item in enumerate(self.items) if stop(item)), len(self.items))
        items, self.items = self.items[:end], self.items[end:]
        self._redraw()
        return items

    def take_all(self) -> list[Queued]:
        items, self.items = self.items, []
        self._redraw()
        return items

    def _redraw(self) -> None:
        self.display = bool(self.items)
        out = Text(no_wrap=True, overflow="ellipsis")
        for i, item in enumerate(self.items):
            if i:
                out.append("\n")
            out.append("queued  ", style="bold")
            out.append(inert(" ".join(item.shown.split()))[:PREVIEW_CHARS])
        if self.items:
            out.append("\n")
            out.append("sent after this turn · ↑ to edit · Esc interrupts, puts it back", style="dim")
        self.update(out)
