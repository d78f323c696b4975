"""Background tasks in the TUI (issue 47): `/tasks` lists what the model started, `/tasks N` follows
a real `python -m http.server`'s log live (a later turn's request shows up in it), `s` stops it,
`/tasks stop N` stops another from the prompt, and quitting leaves nothing running."""

from __future__ import annotations

from textual.widgets import Static

from agent.ui.app import CairnApp
from agent.ui.screens.task_output import TaskOutputScreen
from tests.fakes.llm_server import text, tool_calls
from tests.tools.test_background_tasks import call, fetch_command, free_port, group_alive, server_command
from tests.ui.conftest import chat_text, run_prompt, wait_for, wait_ready

SIZE = (80, 24)


def shown(screen, widget_id: str) -> str:
    return str(screen.query_one(widget_id, Static).render())


async def test_tasks_lists_follows_and_stops_a_server(make_settings, server):
    port = free_port()
    server.add(
        tool_calls(
            [
                call("c1", "terminal-execute", command=server_command(port), background=True),
                call("c2", "terminal-execute", command="echo waiting; sleep 600", background=True),
            ]
        ),
        text("Both started."),
        tool_calls([call("c3", "terminal-execute", command=fetch_command(port))]),
        text("Fetched."),
    )
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "start a server and a watcher")
        assert app.runtime is not None
        pids = [t.pid for t in app.runtime.background_tasks()]
        assert "terminal-execute task 1 · running" in chat_text(app)  # its block: the task, not its JSON
        assert all(group_alive(pid) for pid in pids)

        await run_prompt(pilot, "/tasks")
        listing = chat_text(app)
        assert f"1. {server_command(port)}" in listing and "2. echo waiting; sleep 600" in listing
        assert listing.count("running · <1 min") == 2

        await run_prompt(pilot, "fetch the page")  # a later turn reaches the server
        await run_prompt(pilot, "/tasks 1")
        screen = app.screen
        assert isinstance(screen, TaskOutputScreen)
        await wait_for(pilot, lambda: '"GET / HTTP/1.1" 200' in shown(screen, "#task-output"), what="the log")
        assert "Serving HTTP on 127.0.0.1" in shown(screen, "#task-output")
        await pilot.press("s")
        await wait_for(pilot, lambda: shown(screen, "#task-facts").startswith("stopped by you"), what="the stop")
        assert group_alive(pids[0]) == []
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TaskOutputScreen), what="the view to close")

        await run_prompt(pilot, "/tasks stop 2")
        await wait_for(pilot, lambda: "Background task 2: stopped by you." in chat_text(app), what="the stop line")
        assert group_alive(pids[1]) == []
        assert "Background task 1 (`" in chat_text(app)  # each end is a line in the chat


async def test_quitting_stops_what_still_runs(make_settings, server):
    server.add(tool_calls([call("c1", "terminal-execute", command="sleep 600", background=True)]), text("Started."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "start it")
        assert app.runtime is not None
        (task,) = app.runtime.background_tasks()
        assert group_alive(task.pid)
        await app.quit_app()
    assert group_alive(task.pid) == []
