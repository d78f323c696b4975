"""/tasks: the session's background tasks (terminal-execute with `background`), and their output.

`/tasks` lists them (id, status, exit code, how long, the command); `/tasks N` opens one's
output, following it live, with `s` to stop it; `/tasks stop N` stops it from the prompt. A
dev server the model started is the user's to see and to end, whatever the model does next.
Stopping goes through the runtime (ops.StopTask), as everything a front end asks of the agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.fs.terminal_text import inert
from agent.ui.commands.command import Command
from agent.ui.commands.listing import show_rows
from agent.ui.commands.task_states import state, task_rows

if TYPE_CHECKING:
    from agent.ui.host import Host

USAGE = "[N | stop N]"


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    runtime = app.runtime
    words = args.split()
    if not words:
        show_rows(app, task_rows(runtime.background_tasks()))
        return
    if len(words) == 2 and words[0] == "stop":
        await stop(app, words[1])
        return
    if len(words) == 1 and any(t.id == words[0] for t in runtime.background_tasks()):
        from agent.runtime.ops import StopTask
        from agent.ui.screens.task_output import TaskOutputScreen

        read = lambda: runtime.background_tasks(with_output=True)  # noqa: E731 - the screen's source
        app.push_screen(TaskOutputScreen(words[0], read, lambda task_id: runtime.submit(StopTask(task_id))))
        return
    app.chat.add_notice(f"No background task '{inert(args.strip())}'. Usage: /tasks {USAGE}", kind="warning")


async def stop(app: Host, task_id: str) -> None:
    """End task `task_id` and say how it ended."""
    from agent.runtime.ops import StopTask
    from agent.tools.background_tasks import TaskNotFound

    assert app.runtime is not None  # run() checked
    try:
        ended = await app.runtime.submit(StopTask(task_id))
    except TaskNotFound:
        app.chat.add_notice(f"No background task '{inert(task_id)}'. /tasks lists them.", kind="warning")
        return
    app.chat.add_notice(f"Background task {ended.id}: {state(ended)}.", kind="info")


COMMAND = Command("tasks", "background tasks: list, /tasks N shows one's output, /tasks stop N", run, usage=USAGE)
