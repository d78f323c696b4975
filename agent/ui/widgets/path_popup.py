"""The `@` popup: workspace paths matching what follows the `@`, above the prompt.

Like the slash popup it never takes focus; the prompt drives it (Tab/Enter insert, Up/Down
move, Esc closes). Listing and ranking run in a thread (agent/ui/path_complete.py) in one
worker that always answers the newest query: typing fast never queues a search per key, and
no worker is cancelled mid-way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent.fs.terminal_text import inert
from agent.ui.path_complete import FRESH_S, rank, workspace_paths

SHOWN = 8


class PathPopup(OptionList, can_focus=False):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.display = False
        self.on_pick: Callable[[str], None] | None = None  # set by the prompt: called with the chosen path
        self.workspace: Callable[[], Path] | None = None  # set by the app
        self.query_text: str | None = None  # what the popup should answer; None: closed
        self._answered: str | None = None
        self._listing: tuple[Path, float, list[str]] | None = None
        self._searching = False

    def search(self, query: str) -> None:
        """Show the paths matching `query` (soon: the search runs in a thread)."""
        if query == self.query_text and (self._searching or self._answered == query):
            return
        self.query_text = query
        if not self._searching:
            self._searching = True
            self.run_worker(self._search(), group="paths", exit_on_error=False)

    async def _search(self) -> None:
        try:
            while self.query_text is not None and self.query_text != self._answered:
                query = self.query_text
                workspace = self.workspace() if self.workspace is not None else Path.cwd()
                listing = self._listing
                if listing is None or listing[0] != workspace or time.monotonic() - listing[1] > FRESH_S:
                    paths = await asyncio.to_thread(workspace_paths, workspace)
                    self._listing = listing = (workspace, time.monotonic(), paths)
                found = await asyncio.to_thread(rank, listing[2], query, SHOWN)
                self._answered = query
                if self.query_text == query:
                    self._show(found)
        finally:
            self._searching = False

    def _show(self, paths: list[str]) -> None:
        self.clear_options()
        if not paths:
            self.display = False
            return
        for path in paths:
            self.add_option(Option(inert(path), id=path))
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.query_text = None
        self._answered = None
        self.display = False

    @property
    def shown(self) -> bool:
        return bool(self.display) and self.option_count > 0

    @property
    def selected_path(self) -> str | None:
        if self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.on_pick is not None and event.option_id:
            self.on_pick(event.option_id)
