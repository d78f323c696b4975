"""The chat transcript: user messages, streamed assistant markdown, tool blocks, notices.

The view stays anchored to the bottom (it follows new output until the user scrolls
up) and keeps only the newest MAX_MOUNTED widgets mounted, so adding a message stays
cheap in long sessions. Model and tool text is never parsed as Rich markup, and every text
shown here is made inert first (agent/fs/terminal_text.py): an answer, live or resumed, or a
notice quoting one, cannot write the clipboard, retitle the window or clear the screen. Messages
a condense replaced stay visible, dimmed (class "condensed"), above its marker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.message import Message as Message_  # (Message is the session's, below)
from textual.widget import Widget
from textual.widgets import Static

from agent.fs.terminal_text import InertStream, inert
from agent.ui.widgets.answer_markdown import text_only_markdown
from agent.ui.widgets.block_select import BlockSelection, Foldable
from agent.ui.widgets.command_text import shown_user_text
from agent.ui.widgets.condensed import CondensedMarker
from agent.ui.widgets.history_marks import INTERRUPTED_TEXT, interrupted_turn_ends
from agent.ui.widgets.stored_notice import notices_after
from agent.ui.widgets.thinking import ThinkingBlock
from agent.ui.widgets.tool_block import ToolBlock, diff_text  # noqa: F401 - diff_text: the approval's
from agent.ui.widgets.tool_render import TODO_WRITE
from agent.ui.widgets.user_message import UserMessage

if TYPE_CHECKING:
    from textual.await_remove import AwaitRemove

    from agent.session.models import ContextEvent, Message, SessionNotice, ToolCall

# Markdown (markdown-it, pygments) and Collapsible are imported where first used: they
# are not needed for the first frame, which must come up fast.

MAX_MOUNTED = 200
# A resumed session shows this many widgets at first (a few screens); older ones mount in
# batches as the user scrolls to the top. Laying out 200 at once took seconds.
FIRST_SHOWN = 40
FIRST_PAINT = 12  # of those, the newest ones that fill a screen: laid out in the first frame
OLDER_BATCH = 40
DRAIN_HZ = 20
CONDENSED = "condensed"  # the class of what a condense replaced (dimmed, still readable)


class Notice(Static):
    """A line from cairn itself: help, errors, warnings, "interrupted"."""

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(inert(text), markup=False, classes=f"notice notice-{kind}")
        self.text = text
        self.kind = kind


def stored_thinking(message: Message) -> str:
    """The thinking text a stored assistant message carries (agent/llm/reasoning.py), or ""."""
    thinking = message.meta.get("thinking")
    return thinking if isinstance(thinking, str) and thinking.strip() else ""


class AssistantMessage(Widget, Foldable):
    """Assistant text, streamed through `Markdown.get_stream`, under the model's thinking
    (widgets/thinking.py) when it reasoned first.

    `feed` is synchronous (event callbacks are); chunks go into a queue drained by one
    worker into the stream, which keeps their order and coalesces them between frames.
    """

    def __init__(self, message_id: str = "", text: str | None = None, thinking: str = "") -> None:
        super().__init__(classes="assistant-message")
        self.message_id = message_id
        self.text = text or ""  # as the model wrote it; what is drawn is inert
        self._static = text is not None
        self._inert = InertStream()
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._finished = self._static
        # Set when the Markdown has parsed and mounted its text (it does so in a thread, then
        # in batches): a resumed screen is complete once every such message is drawn.
        self.drawn = asyncio.Event()
        # A live message always has the block (hidden until thinking arrives: the first piece
        # comes before this widget is mounted); a stored one only when it thought.
        self.thinking: ThinkingBlock | None = None
        if not self._static:
            self.thinking = ThinkingBlock(streaming=True)
        elif thinking:
            self.thinking = ThinkingBlock(thinking)
        if self._static and not self.text.strip():
            self.add_class("-no-text")  # only thinking (and tool calls): no Markdown to draw
            self.drawn.set()

    def compose(self):
        from textual.widgets import Markdown

        if self.thinking is not None:
            yield self.thinking
        if not (self._static and not self.text.strip()):
            yield Markdown(inert(self.text) if self._static else "", parser_factory=text_only_markdown)

    def feed_thinking(self, chunk: str) -> None:
        if chunk and not self._finished and self.thinking is not None:
            self.thinking.add(chunk)

    def set_thinking(self, text: str) -> None:
        """The finished message's stored thinking, when none streamed here (no timing known)."""
        if self.thinking is not None and not self.thinking.text and text:
            self.thinking.text = text
            self.thinking.display = True
            self.thinking.redraw()

    @property
    def thinking_collapsible(self) -> bool:
        return self.thinking is not None and self.thinking.collapsible

    def toggle_thinking(self) -> None:
        if self.thinking is not None:
            self.thinking.toggle()

    # -- the keyboard's side (agent/ui/widgets/block_select.py): its thinking ------------
    @property
    def can_fold(self) -> bool:
        return self.thinking_collapsible

    @property
    def folded(self) -> bool:
        return self.thinking is None or self.thinking.collapsed

    def toggle_fold(self) -> None:
        self.toggle_thinking()

    def show_fold_hint(self, hint: str) -> None:
        self.fold_hint = hint
        if self.thinking is not None:
            self.thinking.hint = hint
            self.thinking.redraw()

    def on_mount(self) -> None:
        if not self._static:
            self.run_worker(self._drain(), group="stream", exit_on_error=False)

    def on_markdown_table_of_contents_updated(self, event) -> None:
        # Textual's Markdown posts this at the end of every update, the first one included.
        self.drawn.set()

    def feed(self, chunk: str) -> None:
        if chunk and not self._finished:
            if self.thinking is not None:
                self.thinking.done()  # the answer started: the thinking folds to one line
            self.text += chunk
            shown = self._inert.feed(chunk)  # (empty while a last carriage return waits)
            if shown:
                self._queue.put_nowait(shown)

    def finish(self, status: str = "ok") -> None:
        if self._finished:
            return
        self._finished = True
        held = self._inert.end()
        if held:
            self._queue.put_nowait(held)
        self._queue.put_nowait(None)
        if self.thinking is not None:
            self.thinking.done()
        if not self.text.strip():
            if self.thinking is not None and self.thinking.text:
                self.add_class("-no-text")  # only thinking, then tool calls: its line stays
            else:
                self.display = False  # a response that was only tool calls
        if status == "interrupted":
            self.add_class("-interrupted")

    @property
    def finished(self) -> bool:
        return self._finished

    async def _drain(self) -> None:
        from textual.widgets import Markdown

        stream = Markdown.get_stream(self.query_one(Markdown))
        try:
            done = False
            while not done:
                parts = [await self._queue.get()]
                while not self._queue.empty():  # everything that arrived meanwhile, in one write
                    parts.append(self._queue.get_nowait())
                if parts[-1] is None:
                    parts.pop()
                    done = True
                await stream.write("".join(parts))  # type: ignore[arg-type]
                if not done:
                    # At most DRAIN_HZ markdown updates a second: each one re-parses the
                    # last block and repaints it, which at the chunk rate of a fast model
                    # would starve the loop the stream itself runs on.
                    await asyncio.sleep(1 / DRAIN_HZ)
        finally:
            await stream.stop()


class ChatView(VerticalScroll, can_focus=False):
    """Renders what happened; it owns no state beyond the widgets it shows."""

    class Filled(Message_):
        """The first thing was shown in an empty chat (the first screen's header steps aside)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._assistants: dict[str, AssistantMessage] = {}
        self._tools: dict[str, ToolBlock] = {}
        self._older: list[Widget] = []  # history built but not mounted yet (oldest first)
        self.selection = BlockSelection(self)  # the keyboard's way to every folded block
        # Set by the app: a project command's current body, to show stored expansions compactly.
        self.command_body: Callable[[str], str | None] | None = None

    def on_mount(self) -> None:
        self.anchor()

    # -- adding ---------------------------------------------------------------------
    def _add(self, *widgets: Widget) -> None:
        self._note_filled()
        self.mount_all(widgets)
        self._trim()
        self.selection.schedule()

    def _note_filled(self) -> None:
        if not self.children:
            self.post_message(self.Filled())

    def _trim(self) -> None:
        children = [c for c in self.children if c.parent is self]
        excess = len(children) - MAX_MOUNTED
        if excess > 0:
            self._older = []  # they are older than what goes now: never show them past a gap
            old = children[:excess]
            for widget in old:
                if isinstance(widget, AssistantMessage):
                    self._assistants.pop(widget.message_id, None)
                elif isinstance(widget, ToolBlock):
                    self._tools.pop(widget.call.id, None)
            self.remove_children(old)

    def add_user(self, text: str) -> UserMessage:
        widget = UserMessage(text)
        self.selection.clear()
        self._add(widget)
        self.anchor()  # sending a prompt follows the answer again
        return widget

    def add_block(self, widget: Widget) -> Widget:
        """Another kind of entry (a `!command`'s output); the chat follows it."""
        self._add(widget)
        self.anchor()
        return widget

    def add_notice(self, text: str, kind: str = "info") -> Notice:
        widget = Notice(text, kind)
        self._add(widget)
        return widget

    def add_error(self, text: str) -> Notice:
        return self.add_notice(text, kind="error")

    def start_assistant(self, message_id: str) -> AssistantMessage:
        widget = AssistantMessage(message_id)
        self._assistants[message_id] = widget
        self._add(widget)
        return widget

    def feed(self, message_id: str, text: str) -> None:
        widget = self._assistants.get(message_id) or self.start_assistant(message_id)
        widget.feed(text)

    def feed_thinking(self, message_id: str, text: str) -> None:
        widget = self._assistants.get(message_id) or self.start_assistant(message_id)
        widget.feed_thinking(text)

    def finish_assistant(self, message: Message) -> None:
        widget = self._assistants.get(message.id)
        thinking = stored_thinking(message)
        if widget is None and ((message.content or "").strip() or thinking):
            widget = self.start_assistant(message.id)
            widget.feed(message.content or "")
        if widget is not None:
            widget.set_thinking(thinking)
            widget.finish(message.status)

    def finish_open_streams(self) -> None:
        """End every stream still open (after an interrupt or a crash)."""
        for widget in self._assistants.values():
            widget.finish("interrupted")
        for block in self._tools.values():
            block.mark_stopped()

    def add_condensed(self, record: ContextEvent, summary: Message | None) -> CondensedMarker:
        """A condense happened: dim everything it replaced (all shown so far), add its marker."""
        for widget in [*self.children, *self._older]:
            if isinstance(widget, (UserMessage, AssistantMessage, ToolBlock, CondensedMarker)):
                widget.add_class(CONDENSED)
        marker = CondensedMarker.from_event(record, summary)
        self._add(marker)
        return marker

    def tool_started(self, call: ToolCall) -> ToolBlock:
        block = ToolBlock(call)
        self._tools[call.id] = block
        self._add(block)
        return block

    def tool_output(self, call_id: str, text: str) -> None:
        block = self._tools.get(call_id)
        if block is not None:
            block.add_output(text)

    def tool_finished(self, call: ToolCall, message: Message) -> ToolBlock:
        block = self._tools.get(call.id) or self.tool_started(call)
        block.set_result(message)
        return block

    # -- history ----------------------------------------------------------------------
    def show_history(self, messages: list[Message], notices: Sequence[SessionNotice] = ()) -> None:
        """Render stored messages (a resumed session), newest MAX_MOUNTED only.

        Widgets are built only for the messages that will be mounted."""
        # A prompt restated after a condense summary (agent/context/condense.py) is shown once,
        # where the user typed it.
        messages = [m for m in messages if not m.meta.get("restated_from")]
        start, widgets_needed = len(messages), 0
        while start > 0 and widgets_needed < MAX_MOUNTED:
            start -= 1
            m = messages[start]
            if m.role == "assistant":
                widgets_needed += bool((m.content or "").strip() or stored_thinking(m)) + len(m.tool_calls)
            elif m.role == "user" or m.kind == "summary":
                widgets_needed += 1
        said = notices_after(notices)  # what the turns told the user, after the message it followed
        widgets: list[Widget] = [*said.pop(None, [])]
        blocks: dict[str, ToolBlock] = {}
        bodies: dict[str, str | None] = {}  # each command file read once

        def command_body(name: str) -> str | None:
            if name not in bodies:
                bodies[name] = self.command_body(name) if self.command_body is not None else None
            return bodies[name]

        interrupted = interrupted_turn_ends(messages)  # each shows its `Interrupted` line, as live
        todo_line: ToolBlock | None = None  # a turn's newest todo-write stands for its others, as live
        for m in messages[start:]:
            built: list[Widget] = []
            if m.role == "user":
                todo_line = None
            if m.kind == "summary":
                built.append(CondensedMarker.from_summary(m))
            elif m.role == "user" and m.kind == "note" and m.meta.get("shell"):  # agent/runtime/shell.py
                from agent.ui.widgets.shell_block import ShellBlock

                built.append(ShellBlock.from_note(m))
            elif m.role == "user":
                built.append(UserMessage(shown_user_text(m.content or "", command_body, m.meta)))
            elif m.role == "assistant":
                thinking = stored_thinking(m)
                if (m.content or "").strip() or thinking:
                    built.append(AssistantMessage(m.id, m.content or "", thinking))
                for call in m.tool_calls:
                    blocks[call.id] = ToolBlock(call)
                    built.append(blocks[call.id])
                    if call.name == TODO_WRITE:
                        if todo_line is not None:
                            todo_line.display = False
                        todo_line = blocks[call.id]
            elif m.role == "tool" and m.tool_call_id in blocks:
                blocks[m.tool_call_id].set_result(m)
                if m.meta.get("review") == "keep_planning" and m.meta.get("feedback"):  # said after "n", as live
                    built.append(UserMessage(str(m.meta["feedback"])))
            if m.meta.get("condensed_by"):
                for widget in built:
                    widget.add_class(CONDENSED)
            if m.id in interrupted:
                built.append(Notice(INTERRUPTED_TEXT, "warning"))
            widgets += [*built, *said.pop(m.id, [])]
        for block in blocks.values():
            if block.result is None:
                block.mark_stopped("  ⎿ (no result)")
        widgets = widgets[-MAX_MOUNTED:]
        self._older = widgets[:-FIRST_SHOWN]
        # What fills the screen is laid out first; the rest of the first batch right after.
        first, rest = widgets[-FIRST_PAINT:], widgets[-FIRST_SHOWN:-FIRST_PAINT]
        self._note_filled()
        with self.app.batch_update():
            self.mount_all(first)
        self._trim()
        self.anchor()
        self.selection.schedule()
        if rest:
            self.call_after_refresh(self._mount_before_first, rest)

    def _mount_before_first(self, widgets: list[Widget]) -> None:
        mounted = [c for c in self.children if c.parent is self]
        if mounted:
            with self.app.batch_update():
                self.mount_all(widgets, before=mounted[0])

    async def history_drawn(self, timeout: float) -> None:
        """Wait (at most `timeout` s) until the shown history's Markdown is all on screen."""
        pending = [w.drawn.wait() for w in self.query(AssistantMessage) if w._static and not w.drawn.is_set()]
        if pending:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*pending), timeout)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.selection.schedule()  # the hints follow what is in view
        if new_value <= 0 and old_value > 0 and self._older:
            self.call_later(self._mount_older)

    def _mount_older(self) -> None:
        """Scrolled to the top of a resumed session: bring the next older batch in."""
        mounted = [c for c in self.children if c.parent is self]
        if not self._older or not mounted:
            return
        batch, self._older = self._older[-OLDER_BATCH:], self._older[:-OLDER_BATCH]
        with self.app.batch_update():
            self.mount_all(batch, before=mounted[0])

    def clear_messages(self) -> AwaitRemove:
        """Remove every message (awaitable: await it before showing another history)."""
        self._older = []
        self._assistants.clear()
        self._tools.clear()
        return self.remove_children()

    # -- keyboard (agent/ui/widgets/block_select.py) ---------------------------------------
    def toggle_output_in_view(self) -> bool:
        """Ctrl+O: expand or collapse the selected block, else the newest folded block in view
        (tool output, `!command` output, condense summary, thinking, long pasted prompt);
        False when there is none."""
        return self.selection.toggle_target()

    def on_resize(self) -> None:
        self.selection.schedule()

    def on_click(self) -> None:
        self.selection.schedule()  # a block opened or closed by the mouse: its hint changes

    def on_collapsible_expanded(self) -> None:
        self.selection.schedule()

    def on_fold_changed(self) -> None:
        self.selection.schedule()

    def on_collapsible_collapsed(self) -> None:
        self.selection.schedule()

    # -- queries (tests, status) ------------------------------------------------------
    @property
    def assistant_messages(self) -> list[AssistantMessage]:
        return list(self.query(AssistantMessage))

    @property
    def tool_blocks(self) -> list[ToolBlock]:
        return list(self.query(ToolBlock))
