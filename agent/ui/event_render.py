"""What the screen shows of each event the loop sends (agent/turn/events.py).

One `match` over the event types, each case given only the parts of the screen it changes:
the chat, the status bar, the todo panel, and the two things the app itself decides (a
refused approval's redirect, the status line's refresh after a turn). The loop calls this
synchronously from the app's `handle_event`, which turns an error here into a toast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent.session.models import Message
    from agent.turn import events as ev
    from agent.ui.widgets.chat import ChatView
    from agent.ui.widgets.status import StatusBar
    from agent.ui.widgets.todo import TodoPanel
    from agent.ui.widgets.tool_block import ToolBlock


class TurnSide(Protocol):
    """What an event asks of the app beyond drawing (agent/ui/turns.py, agent/ui/app.py)."""

    def refusal_stored(self) -> None: ...
    def refresh_status(self) -> None: ...


class EventRenderer:
    """Draws the loop's events; remembers, per turn, that a truncation was already said."""

    def __init__(self, chat: ChatView, status: StatusBar, todos: TodoPanel, app: TurnSide) -> None:
        self.chat = chat
        self.status = status
        self.todos = todos
        self.app = app
        self.truncation_shown = False  # one "request shortened" line per turn is enough
        # A turn's todo-write line: the newest stands for the earlier ones (the list is in its
        # panel), so a task of eight updates is one "Updated todos" line, not eight.
        self.todo_line: ToolBlock | None = None

    def turn_started(self) -> None:
        self.truncation_shown = False
        self.todo_line = None

    def render(self, event: ev.Event) -> None:
        from agent.turn import events as ev  # pydantic: off the path to the first frame

        chat, status = self.chat, self.status
        match event:
            case ev.TextDelta():
                chat.feed(event.message_id, event.text)
                status.clear_retry()
            case ev.ThinkingDelta():
                chat.feed_thinking(event.message_id, event.text)
                status.clear_retry()
            case ev.AssistantStarted():
                chat.start_assistant(event.message_id)
                status.clear_retry()
            case ev.AssistantFinished():
                chat.finish_assistant(event.message)
                self._searched(event.message)
            case ev.ToolStarted():
                self._tool_started(event)
            case ev.ToolOutput():
                chat.tool_output(event.call_id, event.text)
            case ev.ToolFinished():
                self._tool_finished(event)
            case ev.Usage():
                status.set_usage(event.context_tokens, event.context_window, event.session_cost, event.cache_share)
            case ev.Retrying():
                status.retrying(event.delay, event.attempt, event.max_attempts, event.reason)
            case ev.CondenseStarted():
                status.condensing(event.tokens)
            case ev.ContextManaged():
                self._context_managed(event)
            case ev.Notice():  # e.g. the answer was cut off at the output limit
                chat.add_notice(event.message[:1].upper() + event.message[1:], kind=event.kind)
            case ev.HookActed():  # a hook blocked a call, changed its input, added context (dim, one line)
                chat.add_notice(event.message, kind="info")
            case ev.TurnError():
                status.condensing_done()
                chat.add_error(event.message)
            case ev.TaskFinished():  # a background task ended, in a turn or between turns
                chat.add_notice(event.message, kind="info")
            case ev.ModeChanged():
                status.set_info(mode=event.mode)
            case ev.TurnFinished():
                status.condensing_done()
                self.truncation_shown = False
                self.todos.turn_finished()
                self.app.refresh_status()
            # UserMessage: already shown when the prompt was sent; LimitReached: only `cairn -p` sets limits.

    def _searched(self, message: Message) -> None:
        """Claude's server-side searches in the answer, one dim line each (agent/llm/server_search.py)."""
        blocks = message.meta.get("server_blocks")
        if blocks:
            from agent.llm.server_search import searched

            for line in searched(blocks):
                self.chat.add_notice(line, kind="info")

    def _tool_started(self, event: ev.ToolStarted) -> None:
        from agent.ui.widgets.tool_render import TODO_WRITE

        block = self.chat.tool_started(event.call)
        if event.call.name == TODO_WRITE:
            if self.todo_line is not None:
                self.todo_line.display = False
            self.todo_line = block

    def _tool_finished(self, event: ev.ToolFinished) -> None:
        self.chat.tool_finished(event.call, event.message)
        self.todos.tool_finished(event.message)
        note = (event.message.meta.get("permission") or {}).get("note")
        if note:  # e.g. "always for this project" could not be saved to .cairn/config.toml
            self.chat.add_notice(f"Permission: {note}", kind="warning")
        self.app.refusal_stored()

    def _context_managed(self, event: ev.ContextManaged) -> None:
        """A condense (a marker; what it replaced dims) or a truncation (one line per turn)."""
        from agent.ui.widgets.condensed import condense_failed_text, truncated_text

        record = event.event
        if record.action == "condense":
            self.status.condensing_done()
            if record.outcome == "ok":
                self.chat.add_condensed(record, event.summary)
            elif record.trigger != "manual":  # /compact's failure ends in a TurnError saying why
                self.chat.add_notice(condense_failed_text(record), kind="warning")
        elif not self.truncation_shown:
            self.truncation_shown = True
            self.chat.add_notice(truncated_text(record), kind="info")
