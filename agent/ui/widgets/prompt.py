"""The multi-line prompt and its slash-command popup.

Enter submits (a priority binding: TextArea would otherwise insert a newline first);
Ctrl+J or Shift+Enter inserts a newline. Typing `/` at the start opens an OptionList
above the prompt with the matching commands (built-in, then command files and skills, with
their argument hints: agent/commands/); Tab/Enter complete, arrows move, Esc (handled by the app's escape
binding) closes it. Typing `@` opens the workspace's paths the same way (widgets/path_popup.py),
fuzzy matched on what follows; Tab/Enter put the chosen `@path` in place of the typed one.
Focus never leaves the TextArea: Tab outside completion does nothing (moving focus away
would lose the keys typed next). Up on the first line / Down on the
last walk the project's prompt history (agent/ui/prompt_history.py); Up in an empty
prompt first takes back a message queued while the agent works. A prompt starting with `!`
is a shell command (agent/ui/shell.py): the border changes colour and says so, as Claude
Code's bash mode does, so the user sees it will run rather than go to the model. A long
paste shows as one placeholder, `[Pasted text #1 +60 lines]` as in Claude Code, rather than
filling the box; what is sent, queued or kept in the history is the real text (`expanded`),
and the placeholder stands for it while it is in the draft (Ctrl+Z, history walks included).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rich.table import Table
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from agent.fs.terminal_text import inert
from agent.ui.early import PLACEHOLDER
from agent.ui.path_complete import inserted, mention_before
from agent.ui.prompt_history import HistoryWalk, PromptHistory
from agent.ui.widgets.path_popup import PathPopup


def _command_row(label: str, width: int, description: str) -> Table:
    """One command of the popup: its description wraps in its own column (at 80 columns it
    wrapped back under the names)."""
    row = Table.grid()
    row.add_column(width=width, no_wrap=True)
    row.add_column(ratio=1)
    row.add_row(Text(inert(label), style="bold"), Text(inert(description), style="dim"))
    return row


class Listed(Protocol):
    """A slash command as the popup shows it (agent/ui/commands/command.py's `Command`)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def usage(self) -> str: ...
    @property
    def takes_args(self) -> bool: ...


class SlashPopup(OptionList, can_focus=False):
    """Matching slash commands; selection is driven from the prompt's key bindings.

    `matching(prefix)` lists them (the app passes the registry's, agent/ui/commands/): the
    registry's commands take the app, which holds this widget."""

    def __init__(self, matching: Callable[[str], Sequence[Listed]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.display = False
        self.matching = matching
        self.on_pick: Callable[[str], None] | None = None  # set by the prompt: called with the chosen command name
        self.commands_shown: dict[str, Listed] = {}  # what the options stand for, by name

    def show_matches(self, prefix: str) -> bool:
        matches = self.matching(prefix)
        self.commands_shown = {c.name: c for c in matches}
        if not matches:
            self.hide()
            return False
        self.clear_options()
        width = max(len(c.name) + (len(c.usage) + 1 if c.usage else 0) for c in matches) + 1
        for c in matches:
            label = "/" + c.name + (" " + c.usage if c.usage else "")
            self.add_option(Option(_command_row(label, width + 2, c.description), id=c.name))
        self.highlighted = 0
        self.display = True
        return True

    def hide(self) -> None:
        self.display = False

    @property
    def visible(self) -> bool:
        return bool(self.display) and self.option_count > 0

    @visible.setter
    def visible(self, new_value: bool | str) -> None:
        """Set as on any widget (textual's setter: the `visibility` style)."""
        OptionList.visible.fset(self, new_value)  # type: ignore[attr-defined]  # mypy sees the getter, not the property

    @property
    def selected_name(self) -> str | None:
        if self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.on_pick is not None and event.option_id:
            self.on_pick(event.option_id)


PASTE_FOLD_LINES = 10  # a paste of more lines than the box shows (early.PROMPT_MAX_ROWS) …
PASTE_FOLD_CHARS = 1000  # … or this long (one long line wraps as tall) shows as a placeholder
SHELL_PREFIX = "!"  # a prompt starting with it is the user's shell command (agent/ui/shell.py)
SHELL_HINT = "! shell command · runs in the workspace"


class PromptInput(TextArea):
    BINDINGS = [
        Binding("enter", "submit", "Send", priority=True, show=False),
        Binding("ctrl+j,shift+enter", "newline", "New line", priority=True, show=False),
        Binding("tab", "complete", "Complete a /command or @path", show=False, priority=True),
        Binding("shift+tab", "stay", show=False, priority=True),
        Binding(
            "up", "up", "Previous prompt (on the first line) · take back a queued message", show=False, priority=True
        ),
        Binding("down", "down", "Next prompt (on the last line)", show=False, priority=True),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, popup: SlashPopup, paths: PathPopup | None = None, **kwargs) -> None:
        super().__init__(
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            compact=True,
            placeholder=PLACEHOLDER,
            **kwargs,
        )
        self.popup = popup
        popup.on_pick = self.complete_command
        self.paths = paths
        if paths is not None:
            paths.on_pick = self.complete_path
        self.prompt_history: PromptHistory | None = None  # set by the app (it knows the project)
        self._walk: HistoryWalk | None = None
        # Set by the app: takes back the newest message queued while a turn runs (None: none).
        self.take_queued: Callable[[], str | None] | None = None
        self.pastes: dict[str, str] = {}  # a long paste's placeholder → what was pasted

    # -- long pastes --------------------------------------------------------------------
    async def _on_paste(self, event: events.Paste) -> None:
        """A long paste goes in as its placeholder (one edit: Ctrl+Z takes it out)."""
        pasted = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = len(pasted.splitlines()) or 1  # a final line break ends the last line, as `wc -l` counts
        if self.read_only or (lines <= PASTE_FOLD_LINES and len(pasted) <= PASTE_FOLD_CHARS):
            return  # TextArea's own handler inserts it
        event.prevent_default()
        label = f"[Pasted text #{len(self.pastes) + 1} +{lines} lines]"
        self.pastes[label] = pasted
        result = self.replace(label, *self.selection)
        self.move_cursor(result.end_location)

    def expanded(self, text: str) -> str:
        """`text` with each paste placeholder in it replaced by what was pasted."""
        for label, pasted in self.pastes.items():
            text = text.replace(label, pasted)
        return text

    # -- popup ------------------------------------------------------------------------
    def _update_popup(self) -> None:
        text = self.text
        if text.startswith("/") and not any(ch.isspace() for ch in text):
            self.popup.show_matches(text[1:])
        else:
            self.popup.hide()
        self._update_paths()

    def _mention(self) -> tuple[tuple[int, int], str] | None:
        """The `@path` being typed at the cursor: where it starts, and what follows the `@`."""
        if self.selected_text:
            return None
        row, column = self.cursor_location
        found = mention_before(self.document.get_line(row)[:column])
        return ((row, found[0]), found[1]) if found is not None else None

    def _update_paths(self) -> None:
        if self.paths is None:
            return
        mention = self._mention()
        if mention is None or self.popup.visible:
            self.paths.hide()
        else:
            self.paths.search(mention[1])

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_popup()
        shell = self.text.startswith(SHELL_PREFIX)
        if shell != self.has_class("-shell"):
            self.set_class(shell, "-shell")
            self.border_subtitle = SHELL_HINT if shell else ""

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._update_paths()  # the cursor left the `@path` (or came back to one)

    def close_popup(self) -> bool:
        """Hide the popups; True if one was open (so Esc was used up)."""
        if self.popup.visible:
            self.popup.hide()
            return True
        if self.paths is not None and self.paths.shown:
            self.paths.hide()
            return True
        return False

    def _path_shown(self) -> bool:
        return self.paths is not None and self.paths.shown

    def restore(self, text: str) -> None:
        """Put `text` back (a prompt sent too early, a rewound turn) with the cursor at its
        end, so whatever the user types next continues it instead of landing in front."""
        self.text = text
        self.move_cursor(self.document.end)

    def clear_draft(self) -> None:
        """Ctrl+C on a draft: cleared as an edit, so Ctrl+Z brings it back."""
        self.select_all()
        self.delete(*self.selection)
        self._walk = None

    def replace_draft(self, text: str) -> None:
        """Put `text` in place of the draft as one edit (Ctrl+Z gives the draft back)."""
        self.select_all()
        self.replace(text, *self.selection)
        self.move_cursor(self.document.end)

    def complete_command(self, name: str) -> None:
        self.text = f"/{name} "
        self.move_cursor(self.document.end)
        self.popup.hide()

    def complete_path(self, path: str) -> None:
        """Put `@path` in place of the `@…` typed at the cursor; a folder stays open for its files."""
        mention = self._mention()
        if mention is None:
            return
        folder = path.endswith("/")
        result = self.replace(inserted(path) + ("" if folder else " "), mention[0], self.cursor_location)
        self.move_cursor(result.end_location)
        if not folder and self.paths is not None:
            self.paths.hide()

    # -- actions ------------------------------------------------------------------------
    # Priority bindings run in the app's handler as soon as the key arrives, while the
    # keys typed just before it may still wait in this widget's queue (a fast typist, a
    # paste-like burst, tmux send-keys). `call_later` runs after them, in order.
    def action_submit(self) -> None:
        self.call_later(self._submit)

    def _submit(self) -> None:
        if self._path_shown():
            self._complete_shown_path()
            return
        self._update_popup()
        if self.popup.visible:
            name = self.popup.selected_name
            command = self.popup.commands_shown.get(name) if name else None
            if command is not None and command.takes_args and self.text.strip() != f"/{name}":
                self.complete_command(command.name)  # its name is `name`
                return
            if command is not None:
                self.text = f"/{name}"
            self.popup.hide()
        text = self.expanded(self.text)
        if not text.strip():
            return
        self.clear()
        self._walk = None
        if self.prompt_history is not None:
            self.prompt_history.add(text.strip("\n"))
        self.post_message(self.Submitted(text.strip("\n")))

    def action_newline(self) -> None:
        self.call_later(self.insert, "\n")

    def _complete_shown_path(self) -> None:
        path = self.paths.selected_path if self.paths is not None else None
        if path:
            self.complete_path(path)

    def action_complete(self) -> None:
        if self._path_shown():
            self.call_later(self._complete_shown_path)  # after the keys typed before Tab
            return
        if not self.popup.visible:
            return  # not SkipAction: focus would move to the chat and the next keys be lost
        name = self.popup.selected_name
        if name:
            self.complete_command(name)

    def action_stay(self) -> None:
        """Shift+Tab: focus stays in the prompt."""

    def action_up(self) -> None:
        if self.popup.visible:
            self.popup.action_cursor_up()
            return
        if self.paths is not None and self.paths.shown:
            self.paths.action_cursor_up()
            return
        if not self.text and self.take_queued is not None:
            queued = self.take_queued()
            if queued is not None:
                self.restore(queued)
                return
        if self.cursor_location[0] > 0 or self.prompt_history is None:
            raise SkipAction()  # an ordinary cursor move
        if self._walk is None:
            self._walk = self.prompt_history.walk(self.text)
        older = self._walk.older()
        if older is not None:
            self._show(older)
            self.move_cursor((0, 0))

    def action_down(self) -> None:
        if self.popup.visible:
            self.popup.action_cursor_down()
            return
        if self.paths is not None and self.paths.shown:
            self.paths.action_cursor_down()
            return
        if self._walk is None or self.cursor_location[0] < self.document.line_count - 1:
            raise SkipAction()
        newer = self._walk.newer()
        if newer is not None:
            self._show(newer)
        if self._walk.at_draft:
            self._walk = None

    def _show(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)
