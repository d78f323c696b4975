"""The app's own keys: what they do and how they share the keyboard with the prompt.

The prompt keeps the focus for the whole session, so every key meant for the chat (page
scrolling, expanding an output) is a *priority* binding here: otherwise the TextArea would
take PageUp as "move the cursor" and the chat could only be scrolled with a mouse. While a
modal screen is up (approval, picker, rewind) these bindings step aside (`check_action`)
and the modal's lists get the keys. README.md's "Keys" table lists these bindings and the
prompt's (tests/ui/test_keys_readme.py checks it).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

if TYPE_CHECKING:
    from textual.app import App

    from agent.runtime.runtime import Runtime
    from agent.ui.widgets.chat import ChatView
    from agent.ui.widgets.prompt import PromptInput
    from agent.ui.widgets.status import StatusBar
    from agent.ui.widgets.todo import TodoPanel

    _AppBase = App[Any]  # for the checker only: the mixin's methods run on CairnApp
else:
    _AppBase = object

ESC_WINDOW = 0.5  # two ESC presses within this many seconds = "ESC twice"
CTRL_C_WINDOW = 2.0

# Actions that act on the main screen only: a modal answers these keys itself.
MAIN_SCREEN_ACTIONS = frozenset(
    {"escape", "scroll_chat", "toggle_output", "select_block", "open_selected", "toggle_todos", "cycle_mode"}
)

APP_BINDINGS: list[BindingType] = [
    Binding("escape", "escape", "Close the popup · interrupt the turn · twice: rewind", show=False, priority=True),
    Binding("ctrl+c", "ctrl_c", "Clear the draft · interrupt the turn · twice: quit", show=False, priority=True),
    Binding("pageup,shift+pageup", "scroll_chat('page_up')", "Scroll the chat up a page", show=False, priority=True),
    Binding(
        "pagedown,shift+pagedown", "scroll_chat('page_down')", "Scroll the chat down a page", show=False, priority=True
    ),
    Binding("ctrl+home", "scroll_chat('home')", "Scroll to the top of the chat", show=False, priority=True),
    Binding("ctrl+end", "scroll_chat('end')", "Scroll to the bottom and follow new output", show=False, priority=True),
    # Reaching every folded block, older ones too: agent/ui/widgets/block_select.py.
    Binding(
        "ctrl+o",
        "toggle_output",
        "Expand / collapse the selected block, else the newest output, long prompt or thinking in view",
        show=False,
        priority=True,
    ),
    Binding("ctrl+up", "select_block(-1)", "Select the folded block above", show=False, priority=True),
    Binding("ctrl+down", "select_block(1)", "Select the folded block below", show=False, priority=True),
    # Over the prompt's Enter only while a block is selected and the prompt is empty.
    Binding("enter", "open_selected", "Expand / collapse the selected block (prompt empty)", show=False, priority=True),
    Binding("ctrl+t", "toggle_todos", "Collapse / expand the todo list", show=False, priority=True),
    # Over the prompt's own Shift+Tab (it keeps the focus there) and Textual's focus_previous;
    # the action is in agent/ui/modes.py.
    Binding("shift+tab", "cycle_mode", "Switch mode: default → accept edits → plan", show=False, priority=True),
]


class KeyActions(_AppBase):
    """Mixed into CairnApp: the actions behind APP_BINDINGS."""

    _last_escape: float = 0.0
    _last_ctrl_c: float = 0.0

    if TYPE_CHECKING:  # what CairnApp (and its TurnActions) provide
        runtime: Runtime | None
        opening: bool

        @property
        def chat(self) -> ChatView: ...
        @property
        def prompt(self) -> PromptInput: ...
        @property
        def status(self) -> StatusBar: ...
        @property
        def todo_panel(self) -> TodoPanel: ...
        @property
        def turn_running(self) -> bool: ...
        def interrupt_turn(self) -> None: ...
        def action_rewind(self) -> None: ...
        async def quit_app(self) -> None: ...

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # On a modal, its own bindings (its Esc, its list's PageUp) answer.
        return not (action in MAIN_SCREEN_ACTIONS and isinstance(self.screen, ModalScreen))

    def on_key(self, event: events.Key) -> None:
        """A key that reached the main screen while nothing had focus is the prompt's.

        The prompt is focused a moment after the app is mounted (Textual focuses on a later
        callback): an Enter typed as the first screen hands over arrived in between, went to
        the screen, and the prompt typed before it was never sent. So the prompt takes the
        focus now and the key is delivered again, through the prompt's own bindings."""
        if self.focused is not None or isinstance(self.screen, ModalScreen) or not self.query("#prompt"):
            return
        if event.key != "enter" and not event.is_printable:
            return
        self.screen.set_focus(self.prompt)
        if self.focused is self.prompt:
            event.stop()
            event.prevent_default()
            self.post_message(events.Key(event.key, event.character))

    def action_escape(self) -> None:
        if self.prompt.close_popup():
            return
        if self.turn_running:
            self.interrupt_turn()
            return
        if self.chat.selection.clear():  # a selected block: Esc lets it go first
            self._last_escape = 0.0
            return
        now = time.monotonic()
        if now - self._last_escape < ESC_WINDOW:
            self._last_escape = 0.0
            self.action_rewind()
        else:
            self._last_escape = now

    async def action_ctrl_c(self) -> None:
        """A draft first: Ctrl+C clears it (Ctrl+Z brings it back). Then once: interrupt the
        turn (or arm quitting); twice within CTRL_C_WINDOW: quit, even while a turn runs:
        quit_app interrupts it and waits until its partial is stored."""
        prompt = self.prompt
        if self.focused is prompt and prompt.selected_text:
            raise SkipAction()  # let the TextArea copy its selection
        if self.focused is prompt and prompt.text.strip():
            prompt.clear_draft()
            self._last_ctrl_c = 0.0
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < CTRL_C_WINDOW:
            await self.quit_app()
            return
        if self.turn_running:
            self._last_ctrl_c = now
            self.interrupt_turn()
            self.status.flash("Interrupted · Ctrl+C again to quit", CTRL_C_WINDOW)
            return
        if self.runtime is None and not self.opening:
            await self.quit_app()  # nothing to lose: no model, or start-up failed
            return
        self._last_ctrl_c = now
        # In the status line, not a toast: a toast sits over the prompt being typed in.
        self.status.flash("Press Ctrl+C again to quit", CTRL_C_WINDOW)

    def action_scroll_chat(self, where: str) -> None:
        chat = self.chat
        if where == "page_up":
            chat.scroll_page_up(animate=False)
        elif where == "page_down":
            chat.scroll_page_down(animate=False)
        elif where == "home":
            chat.scroll_home(animate=False)
        else:
            chat.scroll_end(animate=False)
            chat.anchor()

    def action_toggle_output(self) -> None:
        if not self.chat.toggle_output_in_view():
            self.status.flash("No tool output to expand yet", CTRL_C_WINDOW)

    def action_select_block(self, step: int) -> None:
        if not self.chat.selection.move(step):
            if not self.chat.selection.blocks():
                self.status.flash("No folded block to select", CTRL_C_WINDOW)
            else:
                self.status.flash("No older folded block" if step < 0 else "No newer folded block", CTRL_C_WINDOW)

    def action_open_selected(self) -> None:
        """Enter on a selected block opens it; otherwise Enter is the prompt's (sends)."""
        prompt = self.prompt
        if self.focused is not prompt or prompt.text.strip() or not self.chat.selection.toggle_selected():
            raise SkipAction()

    def action_toggle_todos(self) -> None:
        if not self.todo_panel.toggle():
            self.status.flash("No todo list in this session yet", CTRL_C_WINDOW)
