"""`/tasks` as SVG snapshots at 80×24 and 120×40 (issue 47): the list of background tasks
(a running server, a build that failed, one the user stopped) with hanging rows, and one task's
live output view. Same rules as test_snapshots.py: no runtime, no clock (the tasks are data);
accept a deliberate change with `--snapshot-update` and look at the pictures."""

from __future__ import annotations

import pytest

from agent.tools.background_tasks import TaskView
from agent.ui.commands.listing import show_rows
from agent.ui.commands.task_states import task_rows
from agent.ui.screens.task_output import TaskOutputScreen
from tests.ui.test_snapshots import SIZES, conversation, fixed_home, make_app, settle  # noqa: F401 - autouse

SERVER_LOG = "Serving HTTP on 127.0.0.1 port 8000 (http://127.0.0.1:8000/) ...\n" + "".join(
    f'127.0.0.1 - - [29/Nov/2026 11:5{i % 10}:0{i % 10}] "GET /static/app-{i}.js HTTP/1.1" 200 -\n' for i in range(30)
)
TASKS = [
    TaskView(
        id="1", command="python -m http.server 8000", pid=0, status="running", runtime_seconds=312.0, output=SERVER_LOG
    ),
    TaskView(
        id="2",
        command="npm run build -- --watch=false --config webpack.production.config.js --progress",
        pid=0,
        status="exited",
        exit_code=2,
        runtime_seconds=95.0,
    ),
    TaskView(
        id="3",
        command="pytest -q tests/slow",
        pid=0,
        status="stopped",
        stopped_by="user",
        exit_code=-15,
        runtime_seconds=20.0,
        sandbox="workspace-write",
    ),
]


async def _stop(task_id: str) -> None:
    raise AssertionError("a snapshot stops nothing")


@pytest.mark.parametrize("size", SIZES)
def test_tasks_lists_each_task_with_its_state(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        pilot.app.chat.show_history(conversation())
        await settle(pilot)
        show_rows(pilot.app, task_rows(TASKS))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_a_tasks_output_follows_its_end(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.push_screen(TaskOutputScreen("1", lambda: TASKS, _stop))
        await pilot.pause()
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
