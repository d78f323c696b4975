"""One background task's output, full screen and live (`/tasks N`): what a dev server logs, how
far a build got. `s` stops the task (its whole process group); Esc or q closes the view and
leaves the task running.

The view reads a copy of the tasks (`read`: `Runtime.background_tasks(with_output=True)`)
every half second, and stops one with `stop` (ops.StopTask): the model's read mark is not
moved, so looking never hides output from it.
The output is a command's bytes: inert, as any tool text on screen (agent/fs/terminal_text.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from agent.fs.terminal_text import inert
from agent.ui.commands.task_states import duration, state

if TYPE_CHECKING:
    from agent.tools.background_tasks import TaskView

REFRESH_SECONDS = 0.5
HINT = "s stop the task · ↑↓ PageUp/PageDown scroll · Esc close (it keeps running)"


class TaskOutputScreen(ModalScreen[None]):
    AUTO_FOCUS = "#task-scroll"
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
        Binding("s", "stop", "Stop", show=False),
    ]
    DEFAULT_CSS = """
    #task-box { width: 100%; height: 100%; border: round $primary; padding: 0 1; }
    #task-title { text-style: bold; height: auto; }
    #task-facts { color: $text-muted; height: auto; }
    #task-scroll { height: 1fr; }
    #task-hint { color: $text-muted; height: auto; }
    """

    def __init__(
        self, task_id: str, read: Callable[[], list[TaskView]], stop: Callable[[str], Awaitable[object]]
    ) -> None:
        super().__init__()
        self.task_id = task_id
        self.read = read
        self.stop = stop
        self.shown: TaskView | None = None

    def _current(self) -> TaskView | None:
        found = [t for t in self.read() if t.id == self.task_id]
        return found[0] if found else None

    def compose(self):
        task = self._current()
        command = inert(" ".join(task.command.split())) if task is not None else ""
        with Vertical(id="task-box"):
            yield Static(f"Background task {self.task_id}: {command}", id="task-title", markup=False)
            yield Static("", id="task-facts", markup=False)
            with VerticalScroll(id="task-scroll"):
                yield Static("", id="task-output", markup=False)
            yield Static(HINT, id="task-hint", markup=False)

    def on_mount(self) -> None:
        self.refresh_output()
        self.set_interval(REFRESH_SECONDS, self.refresh_output)

    def refresh_output(self) -> None:
        task = self._current()
        if task is None:
            return
        scroll = self.query_one("#task-scroll", VerticalScroll)
        following = scroll.scroll_y >= scroll.max_scroll_y  # at the end: stay at the end
        self.query_one("#task-facts", Static).update(f"{state(task)} · {duration(task.runtime_seconds)}")
        if self.shown is None or task.output != self.shown.output:
            self.query_one("#task-output", Static).update(inert(task.output or "(no output yet)"))
            if following:
                scroll.call_after_refresh(scroll.scroll_end, animate=False)
        self.shown = task

    async def action_stop(self) -> None:
        if self.shown is not None and self.shown.status == "running":
            await self.stop(self.task_id)
            self.refresh_output()

    def action_close(self) -> None:
        self.dismiss(None)
