"""The todo list pinned above the prompt: where the model is in a multi-step task, at a glance.

It shows the newest list `todo-write` set (agent/tools/todos.py): live from the loop's
ToolFinished events, and from the session's history when a session is opened, resumed,
rewound or switched (a condense summary carries the list, so `/compact` changes nothing
here). It must never crowd out the chat or the prompt: at 80×24 it takes five lines at most
(the title and four rows), showing the item in progress with one item before it and
"… N more" for the rest; taller terminals get a few more rows. Ctrl+T collapses it to its
title line. Once every item is done it stays until the turn ends, then hides (Ctrl+T brings
it back); an empty list hides it at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from agent.tools.todos import Todo, all_done, current_todos, progress, todos_of
from agent.ui.widgets.tool_render import inert

if TYPE_CHECKING:
    from agent.runtime.runtime import Runtime

MIN_ROWS = 3
MAX_ROWS = 8
# Lines of the screen a row of the panel costs the chat: at 24 lines high the panel gets 4
# rows, at 40 it gets MAX_ROWS.
ROOM_FOR_THE_REST = 16
ICONS = {"completed": "✔", "in_progress": "▶", "pending": "☐"}
ROW_CLASSES = {"completed": "-done", "in_progress": "-active", "pending": "-pending"}


def rows_for(height: int) -> int:
    """Rows of items (and "… N more" lines) the panel may use on a terminal `height` lines high."""
    return max(MIN_ROWS, min(MAX_ROWS, (height - ROOM_FOR_THE_REST) // 2))


def focus(todos: list[Todo]) -> int:
    """The item the user wants to see: the one in progress, else the next to do, else the last."""
    for wanted in ("in_progress", "pending"):
        for index, todo in enumerate(todos):
            if todo["status"] == wanted:
                return index
    return len(todos) - 1


def _end(count: int, rows: int, start: int) -> int:
    """Where the shown items end when they start at `start`, a "… more" line taking a row
    above when items are hidden there and below when items are hidden there."""
    end = start + rows - (1 if start > 0 else 0)
    return min(count, end - 1) if end < count else count


def window(todos: list[Todo], rows: int) -> tuple[int, int]:
    """The items shown (`start`, `end`): all when they fit; else the focus with the item
    before it for context, the panel filled to the end when the focus is near it."""
    count = len(todos)
    if count <= rows:
        return 0, count
    at = focus(todos)
    start = max(0, min(at - 1, count - rows + 1))
    if not start <= at < _end(count, rows, start):  # too few rows for the item before it
        start = at
    return start, _end(count, rows, start)


def row_text(todo: Todo) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{ICONS[todo['status']]} {inert(' '.join(todo['content'].split()))}")
    return text


def title_text(todos: list[Todo], collapsed: bool) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("Todos ", style="bold")
    text.append(progress(todos), style="bold")
    if collapsed:
        current = todos[focus(todos)]
        if current["status"] != "completed":
            text.append(f"  {ICONS[current['status']]} {inert(' '.join(current['content'].split()))}")
        text.append("  (Ctrl+T)", style="dim")
    else:
        text.append("  · Ctrl+T hides", style="dim")
    return text


class TodoPanel(Vertical):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.todos: list[Todo] = []
        self.collapsed = False
        self.dismissed = False  # all done and the turn over: hidden until Ctrl+T
        self._changes = 0  # live updates seen: a history read started before one is stale
        self._rows = MAX_ROWS
        self.display = False

    def compose(self):
        yield Static("", classes="todo-title")
        for _ in range(MAX_ROWS):
            yield Static("", classes="todo-row")

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._on_layout)
        self._redraw()

    # -- what changes the list ----------------------------------------------------------
    def tool_finished(self, result: Any) -> None:
        """A tool result arrived (the loop's ToolFinished): a todo-write's sets the list."""
        todos = todos_of(result)
        if todos is not None:
            self._changes += 1
            self.show(todos)

    def show(self, todos: list[Todo], *, at_rest: bool = False) -> None:
        """Show `todos`; `at_rest` (no turn running): a finished list stays hidden."""
        self.todos = todos
        self.dismissed = at_rest and all_done(todos)
        self._redraw()

    def turn_finished(self) -> None:
        if all_done(self.todos) and not self.dismissed:
            self.dismissed = True
            self._redraw()

    def clear(self) -> None:
        self._changes += 1
        self.show([])

    def restore(self, tail: list[Any], runtime: Runtime) -> None:
        """The opened session's list: from `tail` (the newest messages, already read to draw the
        chat) when it holds one, else from the whole active path, read behind the screen."""
        found = [m for m in tail if todos_of(m) is not None]
        if found:
            self.show(current_todos(found), at_rest=True)
            return
        self.show([], at_rest=True)
        changes = self._changes

        async def read() -> None:
            try:
                todos = current_todos(await runtime.history())
            except Exception:
                return  # no list is shown; the chat shows the history that could be read
            if changes == self._changes:
                self.show(todos, at_rest=True)

        self.run_worker(read(), group="todos", exclusive=True, exit_on_error=False)

    def toggle(self) -> bool:
        """Ctrl+T: collapse or expand the list (bring back a finished one). False: there is none."""
        if not self.todos:
            return False
        if self.dismissed:
            self.dismissed, self.collapsed = False, False
        else:
            self.collapsed = not self.collapsed
        self._redraw()
        return True

    # -- drawing --------------------------------------------------------------------------
    def _on_layout(self, screen: object) -> None:
        rows = rows_for(self.app.size.height)
        if rows != self._rows:
            self._redraw()

    def _redraw(self) -> None:
        if not self.is_mounted:
            return
        todos = self.todos
        self.display = bool(todos) and not self.dismissed
        if not self.display:
            return
        self._rows = rows_for(self.app.size.height)
        self.query_one(".todo-title", Static).update(title_text(todos, self.collapsed))
        lines: list[tuple[Text | str, str]] = []
        if not self.collapsed:
            start, end = window(todos, self._rows)
            if start:
                done = all(t["status"] == "completed" for t in todos[:start])
                lines.append((f"… {start} {'done' if done else 'more'}", "-more"))
            lines += [(row_text(t), ROW_CLASSES[t["status"]]) for t in todos[start:end]]
            if end < len(todos):
                lines.append((f"… {len(todos) - end} more", "-more"))
        for index, row in enumerate(self.query(".todo-row").results(Static)):
            shown = index < len(lines)
            row.display = shown
            if shown:
                content, kind = lines[index]
                row.set_classes(f"todo-row {kind}")
                row.update(content)
