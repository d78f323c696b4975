"""Background tasks as the user and the model hear of them: events at start and end, and the
one-line note the next turn carries for a task whose end the model has not seen.

A task that ends between turns (a dev server that crashed, a build that finished) would
otherwise go unnoticed until the model happened to call task-output. The note is a user-side
message of kind "note" written before the user's message, the way `!command` output reaches
the model (agent/runtime/shell.py), so the history stays a valid request whatever happens next.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.session.models import Message
from agent.tools.background_tasks import BackgroundTask, BackgroundTasks
from agent.tools.registry import ToolRegistry, offer_task_tools
from agent.turn.events import Event, TaskFinished, TaskStarted
from agent.turn.writer import SessionWriter

TASKS_META = "tasks"  # meta key of the note: the ids of the tasks it tells of
MAX_COMMAND_CHARS = 80


def _short(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= MAX_COMMAND_CHARS else line[: MAX_COMMAND_CHARS - 1] + "…"


def ended_line(task: BackgroundTask) -> str:
    """`Background task 2 (`npm run dev`) exited with code 1 after 14 s.`"""
    after = f"after {task.runtime_seconds:.0f} s"
    return f"Background task {task.id} (`{_short(task.command)}`) {task.describe_end()} {after}."


def task_event(task: BackgroundTask) -> TaskStarted | TaskFinished:
    if task.status == "running":
        return TaskStarted(task_id=task.id, command=task.command, pid=task.pid)
    return TaskFinished(
        task_id=task.id,
        command=task.command,
        exit_code=task.exit_code,
        stopped_by=task.stopped_by,
        runtime_seconds=task.runtime_seconds,
        message=ended_line(task),
    )


async def note_endings(tasks: BackgroundTasks | None, writer: SessionWriter) -> None:
    """Store the note for the tasks that ended unseen since the last turn (none: nothing)."""
    ended = tasks.take_unseen_endings() if tasks is not None else []
    if ended:
        lines = [f"[cairn] {ended_line(t)} task-output shows its last output." for t in ended]
        meta = {TASKS_META: [t.id for t in ended]}
        await writer.append(Message(role="user", kind="note", content="\n".join(lines), meta=meta))


def on_task_change(
    registry: Callable[[], ToolRegistry], emit: Callable[[Event], None]
) -> Callable[[BackgroundTask], None]:
    """What an agent does when one of its tasks starts or ends: from the first on, the model
    gets `task-output` and `task-stop` (agent/tools/registry.py offer_task_tools), and the
    front ends an event."""

    def changed(task: BackgroundTask) -> None:
        offer_task_tools(registry())
        emit(task_event(task))

    return changed
