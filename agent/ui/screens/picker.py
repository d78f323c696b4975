"""Session picker (/resume, /sessions, `cairn --resume` without an id).

A filter `Input` above an `OptionList` of sessions, newest first. The OptionList draws
only the rows on screen, so a thousand sessions stay smooth; filtering rebuilds its
options from a lower-cased haystack computed once per session. The filter keeps focus
while Up/Down/PageUp/PageDown/Enter act on the list (priority bindings on the screen).
Deleting asks twice: Ctrl+D (anywhere) or `d` (when the list has focus; in the filter
`d` is a letter). The screen never touches the store: deleting goes through the
`delete` callback the caller passes (which asks the runtime).

A row's first line is fitted to the list's width once it is known (and again when it
changes): the title gives way first, then the folder, so the age and the open session's
"(open now)" stay on screen at 80 columns instead of being cut off at the row's end. The
folder is shown only when the sessions listed are in different folders (one folder for all:
the picker's title names it once), so at 80 columns the title gets the width, not a column
that says the same thing on every row. Filtering lists the sessions whose title matches
first: a match on a hidden first prompt (a command's expansion) or a folder comes after.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent.fs.terminal_text import inert
from agent.session.titles import readable_title
from agent.ui.error_text import readable
from agent.ui.widgets.tool_render import cells, fit_line

if TYPE_CHECKING:
    from agent.session.models import SessionSummary

TITLE_CHARS = 60  # a stored title's length (agent/session/titles.py); the row's width cuts it further
PREVIEW_CHARS = 96
FOLDER_CHARS = 30
TITLE_MIN_CHARS = 16  # a narrow row cuts the title down to this, then the folder
FOLDER_MIN_CHARS = 12
CURRENT_TAG = "  (open now)"
HINT = "type to filter · ↑↓ move · Enter open · Ctrl+D delete (d in the list) · Tab filter/list · Esc close"

Delete = Callable[[str], Awaitable[None]]


def relative_age(ms: int, now: float | None = None) -> str:
    """'just now', '3 min ago', '5 h ago', 'yesterday', '5 d ago', then the date."""
    now = time.time() if now is None else now
    seconds = max(0.0, now - ms / 1000)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    if days == 1:
        return "yesterday"
    if days < 30:
        return f"{days} d ago"
    return time.strftime("%Y-%m-%d", time.localtime(ms / 1000))


def short_folder(path: str, limit: int = FOLDER_CHARS) -> str:
    home = str(Path.home())
    if path == home or path.startswith(home + "/"):
        path = "~" + path[len(home) :]
    return path if len(path) <= limit else "…" + path[-(limit - 1) :]


def flat(text: str, limit: int) -> str:
    """One line of at most `limit` characters, inert (titles and prompts come from outside)."""
    text = inert(" ".join((text or "").split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def title_of(summary: SessionSummary) -> str:
    return flat(summary.session.title, TITLE_CHARS) or "untitled"


def row(
    summary: SessionSummary,
    *,
    current: bool = False,
    now: float | None = None,
    width: int = 0,
    show_folder: bool = True,
) -> Content:
    """Two lines: title · messages · folder (when `show_folder`) · age, then the first prompt.
    With a `width`, the first line fits it: the title is cut first (to TITLE_MIN_CHARS), then
    the folder."""
    s = summary.session
    count = summary.message_count
    title, folder = title_of(summary), short_folder(inert(s.cwd)) if show_folder else ""
    messages = f"  {count} message{'s' if count != 1 else ''}" + (" · " if show_folder else "")
    age = f" · {relative_age(s.updated_at, now)}"
    tag = CURRENT_TAG if current else ""
    over = cells(title + messages + folder + age + tag) - width if width > 0 else 0
    if over > 0:
        title = fit_line(title, max(TITLE_MIN_CHARS, cells(title) - over))
        over = cells(title + messages + folder + age + tag) - width
    if over > 0 and show_folder:
        folder = short_folder(s.cwd, max(FOLDER_MIN_CHARS, len(folder) - over))
    parts: list[tuple[str, str] | str] = [(title, "bold"), (messages + folder + age, "dim")]
    if current:
        parts.append((tag, "italic"))
    prompt = flat(readable_title(summary.first_prompt or ""), PREVIEW_CHARS)
    parts.append(("\n  " + (prompt or "(no prompt)"), "dim italic"))
    return Content.assemble(*parts)


def haystack(summary: SessionSummary) -> str:
    s = summary.session
    return "\n".join((s.title, summary.first_prompt, s.cwd, s.id)).lower()


class SessionList(OptionList):
    """The picker's list: tells the picker its row width whenever its size changes."""

    def on_resize(self) -> None:
        padding = self.get_component_styles("option-list--option").padding.width
        screen = self.screen
        if isinstance(screen, SessionPicker):
            screen.fit_rows(self.scrollable_content_region.width - padding)


class SessionPicker(ModalScreen[str | None]):
    """Dismisses with the chosen session id, or None (Esc)."""

    AUTO_FOCUS = "#picker-filter"
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("pageup", "page(-1)", show=False, priority=True),
        Binding("pagedown", "page(1)", show=False, priority=True),
        Binding("enter", "open", show=False, priority=True),
        Binding("ctrl+d", "delete", show=False, priority=True),  # Input would delete a character
        Binding("d", "delete", show=False),  # reaches the screen only when the list has focus
    ]

    def __init__(
        self,
        summaries: list[SessionSummary],
        *,
        current_id: str | None = None,
        delete: Delete | None = None,
        title: str = "Resume a session",
    ) -> None:
        super().__init__()
        self.summaries = list(summaries)
        self.current_id = current_id
        self._delete = delete
        self._title = title
        self._now = time.time()
        self._haystacks = {s.session.id: haystack(s) for s in self.summaries}
        self._titles = {s.session.id: s.session.title.lower() for s in self.summaries}
        folders = {s.session.cwd for s in self.summaries}
        self.show_folder = len(folders) > 1  # one folder for all: named once, in the picker's title
        self._folder = short_folder(inert(folders.pop())) if len(folders) == 1 else ""
        self._rows: dict[str, Content] = {}
        self._width = 0  # of a row's text in the list (0: not laid out yet)
        self._pending_delete: str | None = None
        self.shown: list[SessionSummary] = []

    def compose(self):
        with Vertical(id="picker-box"):
            yield Static("", id="picker-title", markup=False)
            yield Input(placeholder="filter: title, first prompt, folder or id", id="picker-filter")
            yield SessionList(id="picker-list")
            yield Static(HINT, id="picker-hint", markup=False)

    def on_mount(self) -> None:
        self.refilter("")

    # -- the list -------------------------------------------------------------------------
    @property
    def options(self) -> OptionList:
        return self.query_one("#picker-list", OptionList)

    @property
    def filter_text(self) -> str:
        return self.query_one("#picker-filter", Input).value

    def _row(self, summary: SessionSummary) -> Content:
        sid = summary.session.id
        if sid not in self._rows:
            self._rows[sid] = row(
                summary, current=sid == self.current_id, now=self._now, width=self._width, show_folder=self.show_folder
            )
        return self._rows[sid]

    def fit_rows(self, width: int) -> None:
        """The list's rows are `width` cells wide now: rebuild them to fit, same highlight."""
        if width == self._width or not self.is_mounted:
            return
        self._width = width
        self._rows.clear()
        options = self.options
        highlighted = options.highlighted
        options.set_options(Option(self._row(s), id=s.session.id) for s in self.shown)
        options.highlighted = highlighted

    def refilter(self, text: str) -> None:
        needle = text.strip().lower()
        found = [s for s in self.summaries if not needle or needle in self._haystacks[s.session.id]]
        # Title matches first (newest first within each): the one the user reads is the one they meant.
        self.shown = sorted(found, key=lambda s: bool(needle) and needle not in self._titles[s.session.id])
        options = self.options
        options.set_options(Option(self._row(s), id=s.session.id) for s in self.shown)
        if self.shown:
            options.highlighted = 0
        total = len(self.summaries)
        count = f"{len(self.shown)} of {total}" if needle else str(total)
        where = f" · {self._folder}" if self._folder else ""
        self.query_one("#picker-title", Static).update(
            f"{self._title} — {count} session{'s' if total != 1 else ''}{where}"
        )
        self._cancel_delete()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refilter(event.value)

    @property
    def highlighted_id(self) -> str | None:
        option = self.options.highlighted_option
        return option.id if option is not None else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if self._pending_delete is not None and event.option_id != self._pending_delete:
            self._cancel_delete()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # a click, or Enter while the list has focus
        self.dismiss(event.option_id)

    # -- actions --------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        options = self.options
        if step < 0:
            options.action_cursor_up()
        else:
            options.action_cursor_down()

    def action_page(self, step: int) -> None:
        options = self.options
        if step < 0:
            options.action_page_up()
        else:
            options.action_page_down()

    def action_open(self) -> None:
        chosen = self.highlighted_id
        if chosen is not None:
            self.dismiss(chosen)

    def action_close(self) -> None:
        self.dismiss(None)

    async def action_delete(self) -> None:
        sid = self.highlighted_id
        if sid is None or self._delete is None:
            return
        summary = next(s for s in self.summaries if s.session.id == sid)
        if self._pending_delete != sid:
            self._pending_delete = sid
            key = "Ctrl+D" if isinstance(self.focused, Input) else "d"
            self._hint(f"press {key} again to delete {title_of(summary)}", "warning")
            return
        self._pending_delete = None
        try:
            await self._delete(sid)
        except Exception as exc:  # readable, never a traceback
            self._hint(f"Could not delete {title_of(summary)}: {readable(exc)}", "error")
            return
        index = self.options.highlighted or 0
        self.summaries.remove(summary)
        self._haystacks.pop(sid, None)
        self.refilter(self.filter_text)
        if self.shown:
            self.options.highlighted = min(index, len(self.shown) - 1)
        self._hint(f"Deleted {title_of(summary)}", "info")

    # -- the hint line --------------------------------------------------------------------
    def _hint(self, text: str, kind: str) -> None:
        hint = self.query_one("#picker-hint", Static)
        hint.update(text)
        hint.set_classes(f"-{kind}")

    def _cancel_delete(self) -> None:
        self._pending_delete = None
        if self.is_mounted:
            self._hint(HINT, "help")

    @property
    def hint_text(self) -> str:
        return str(self.query_one("#picker-hint", Static).content)
