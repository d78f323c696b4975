"""Turns as the app runs them: one at a time, what is sent meanwhile queued, Esc interrupts.

A turn runs in an exclusive worker so the prompt stays usable while it streams. What the
user sends during a turn is queued (widgets/queued.py) and goes as the next prompt when the
turn ends; an interrupted turn gives the queue back to the prompt instead, unsent, because
the user stopped the agent to say something else.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from textual import work

from agent.runtime.ops import Compact, Interrupt, Prompt
from agent.ui.error_text import readable

STILL_WORKING_FLASH_S = 4.0  # long enough to read, gone before it is stale

if TYPE_CHECKING:
    from textual.app import App

    from agent.runtime.runtime import Runtime
    from agent.ui.event_render import EventRenderer
    from agent.ui.widgets.chat import ChatView
    from agent.ui.widgets.prompt import PromptInput
    from agent.ui.widgets.queued import QueuedPrompts
    from agent.ui.widgets.status import StatusBar

    _AppBase = App[Any]  # for the checker only: the mixin's methods run on CairnApp
else:
    _AppBase = object


class TurnActions(_AppBase):
    """Mixed into CairnApp: starting, queueing and interrupting turns."""

    _turn_active: bool = False
    _interrupt_requested: bool = False
    _redirect: str | None = None  # "No, and tell cairn what to do instead": the words, until sent
    _redirecting: bool = False

    if TYPE_CHECKING:  # what CairnApp provides
        runtime: Runtime | None
        opening: bool
        _pending: list[str]

        @property
        def event_renderer(self) -> EventRenderer: ...

        @property
        def chat(self) -> ChatView: ...
        @property
        def prompt(self) -> PromptInput: ...
        @property
        def queued(self) -> QueuedPrompts: ...
        @property
        def status(self) -> StatusBar: ...

        no_model: bool
        open_error: str | None

        def refresh_status(self) -> None: ...
        def turn_took(self, seconds: float, interrupted: bool) -> bool: ...

    @property
    def turn_running(self) -> bool:
        return self._turn_active

    def notice_not_ready(self) -> None:
        """Why nothing can run yet: no model, cairn could not start, or still starting."""
        if self.no_model:
            self.chat.add_notice("No model configured: set one with /model <name> (see above).", kind="warning")
        elif self.open_error:
            self.chat.add_error(f"cairn could not start: {self.open_error}")
        else:
            self.chat.add_notice("Still starting, try again in a moment.", kind="warning")

    def still_working(self, text: str) -> bool:
        """True (and the text back in the prompt) when a turn runs: one turn at a time."""
        if not self.turn_running:
            return False
        self.prompt.restore(text)
        # In the status line, not a toast: a toast covers the queue's hint above the prompt.
        self.status.flash("Still working: Esc interrupts, then send again", STILL_WORKING_FLASH_S)
        return True

    def send_prompt(self, shown: str, sent: str | None = None) -> None:
        """Start a turn with `sent` (default `shown`); the chat shows what the user typed
        (a project command shows as `/name args`, the model gets its expanded block).
        While a turn runs the message is queued: it is sent when the turn ends."""
        if self.turn_running:
            self.queued.add(shown, sent)
            return
        if self.runtime is None and not self.opening:
            # Nothing can send it (no model, or cairn could not start: a read-only data
            # folder): the text stays in the prompt, and the chat says why it was not sent.
            self.notice_not_ready()
            self.chat.add_notice("Not sent: your text is still in the prompt.", kind="warning")
            if not self.prompt.text.strip():
                self.prompt.restore(shown)
            return
        self.chat.add_user(shown)
        if self.runtime is None:
            self._pending.append(sent or shown)
            return
        self._run_turn(sent or shown)

    def start_compact(self, instructions: str | None) -> None:
        """/compact: condense now, run as a turn (spinner, Esc interrupts)."""
        self._run_turn(instructions or "", compact=True)

    def start_shell(self, command: str) -> None:
        """`!command` (agent/ui/shell.py): run as a turn (spinner, Esc interrupts, prompts queue)."""
        self._run_turn(command, shell=True)

    @work(group="turn", exclusive=True, exit_on_error=False)
    async def _run_turn(self, text: str, *, compact: bool = False, shell: bool = False) -> None:
        """Run a user turn, or with `compact` a condense (`text`: its instructions), or with
        `shell` the user's own command."""
        assert self.runtime is not None
        started = time.monotonic()
        self._turn_active = True
        self._interrupt_requested = False
        self.event_renderer.turn_started()
        self.status.turn_started()
        try:
            if compact:
                await self.runtime.submit(Compact(text or None))
            elif shell:
                from agent.ui.shell import run_in_chat

                await run_in_chat(self.chat, self.runtime, text)
            else:
                await self.runtime.submit(Prompt(text))
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this worker itself was cancelled
            # else the turn was interrupted inside the runtime: not an error
        except Exception as exc:
            self.notify(readable(exc), severity="error", markup=False)
        finally:
            self._turn_active = False
            self.chat.finish_open_streams()
            self.status.turn_ended()
            if self._interrupt_requested and not self._redirecting:
                from agent.ui.widgets.history_marks import INTERRUPTED_TEXT

                self.chat.add_notice(INTERRUPTED_TEXT, kind="warning")
                self._give_back_queued()
            self._redirecting = False
            self.turn_took(time.monotonic() - started, self._interrupt_requested)  # agent/ui/notify.py
            self.refresh_status()
            if self.queued.items and self.runtime is not None:
                self.call_later(self._send_queued)

    def _send_queued(self) -> None:
        """The turn ended: what was queued meanwhile goes as the next prompt (one turn); a
        queued `!command` runs on its own, in its place (the prompts around it go before and
        after it: the model reads its output with the next one)."""
        if self.turn_running or not self.queued.items:
            return
        from agent.ui import shell
        from agent.ui.widgets.prompt import SHELL_PREFIX

        if shell.is_shell(self.queued.items[0].shown):
            self.start_shell(self.queued.take_first().shown[len(SHELL_PREFIX) :].strip())
            return
        items = self.queued.take_until(lambda item: shell.is_shell(item.shown))
        shown = "\n\n".join(i.shown for i in items)
        sent = "\n\n".join(i.sent or i.shown for i in items)
        self.send_prompt(shown, sent if sent != shown else None)

    def _take_queued(self) -> str | None:
        item = self.queued.take_last()
        return item.shown if item is not None else None

    def _give_back_queued(self) -> None:
        """An interrupted turn: queued messages return to the prompt (after the draft), unsent."""
        items = self.queued.take_all()
        if items:
            draft = self.prompt.text.rstrip("\n")
            self.prompt.restore("\n\n".join([draft, *(i.shown for i in items)] if draft else [i.shown for i in items]))

    def redirect_after_refusal(self, text: str) -> None:
        """The approval's "No, and tell cairn what to do instead": the tool stores the refusal
        as its result; then (`refusal_stored`) the turn stops and `text` goes as the next
        prompt, so the model reads the refusal and the user's words together before it acts."""
        self._redirect = text

    def refusal_stored(self) -> None:
        if self._redirect is None:
            return
        text, self._redirect = self._redirect, None
        waiting = self.queued.take_all()
        self.queued.add(text)
        for item in waiting:
            self.queued.add(item.shown, item.sent)
        self._redirecting = True
        self.interrupt_turn()

    def interrupt_turn(self) -> None:
        """Stop the running turn; the prompt stays usable throughout."""
        self._interrupt_requested = True
        if self.runtime is None or not self.runtime.submit(Interrupt()).result():
            self.workers.cancel_group(self, "turn")
