"""A background task in words, for `/tasks`' list and its output view: its state, how long it
has run (in minutes: a list read a moment later still says the same), its rows. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.fs.terminal_text import inert

if TYPE_CHECKING:
    from agent.tools.background_tasks import TaskView

MAX_COMMAND_CHARS = 200


def duration(seconds: float) -> str:
    """Minutes, not seconds: a list read a moment later still says the same."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "<1 min"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def state(task: TaskView) -> str:
    """`running`, `exited 0`, `stopped by you`, …"""
    if task.status == "running":
        return "running"
    by = {"user": "by you", "model": "by the model", "session_end": "at the session's end"}
    if task.stopped_by is not None:
        return f"stopped {by[task.stopped_by]}"
    return f"exited {task.exit_code}"


def task_rows(tasks: list[TaskView]) -> list[tuple[str, int]]:
    if not tasks:
        return [("No background task in this session (the model starts one with terminal-execute's background).", 0)]
    rows = [("Background tasks (/tasks N shows one's output, /tasks stop N ends it):", 0)]
    for task in tasks:
        number = f"  {task.id}. "
        command = " ".join(task.command.split())[:MAX_COMMAND_CHARS]
        rows.append((f"{number}{inert(command)}", len(number)))
        where = " · sandboxed" if task.sandbox else ""
        rows.append((" " * len(number) + f"{state(task)} · {duration(task.runtime_seconds)}{where}", len(number)))
    return rows
