"""Background tasks end to end (issue 47, SPEC §13.6): a real `python -m http.server` started with
`terminal-execute` `background: true`, reached by a command of a later turn, its log read with
`task-output`, ended with `task-stop`; and nothing left running once the session ends."""

from __future__ import annotations

import asyncio
import json
import shlex
import socket
import sys
from pathlib import Path

from agent.runtime.ops import NewSession, Prompt
from tests.fakes.approver import FakeApprover
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_alive(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`: the process list checked."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def server_command(port: int) -> str:
    return f"{sys.executable} -u -m http.server {port} --bind 127.0.0.1"


def fetch_command(port: int) -> str:
    """Reaches the server, retrying while it is still starting (bounded: 100 tries)."""
    script = (
        "import time, urllib.request\n"
        "for _ in range(100):\n"
        "    try:\n"
        f"        print(urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5).read().decode()[:400]); break\n"
        "    except OSError: time.sleep(0.1)\n"
    )
    return f"{sys.executable} -c {shlex.quote(script)}"


def call(call_id: str, name: str, **args) -> tuple[str, str, dict]:
    return (call_id, name, args)


def results(runtime) -> dict[str, dict]:
    return {e.call.id: e.message for e in of_type(runtime.events, "tool_finished")}


async def test_a_server_in_the_background_is_reached_read_and_stopped(server, open_runtime, workspace):
    port = free_port()
    (workspace / "hello.txt").write_text("hi\n")
    server.add(
        tool_calls([call("c1", "terminal-execute", command=server_command(port), background=True)]),
        text("started"),
        tool_calls(
            [
                call("c2", "terminal-execute", command=fetch_command(port)),
                call("c3", "task-output", taskId="1"),
                call("c4", "task-stop", taskId="1"),
            ]
        ),
        text("stopped"),
    )
    approver = FakeApprover("once")
    runtime = await open_runtime(yolo=False, approver=approver)
    try:
        await runtime.submit(Prompt("start a server"))
        started = results(runtime)["c1"]
        shown = json.loads(started.content)
        assert shown["taskId"] == "1" and shown["status"] == "running", shown
        assert started.meta["outsideSandbox"] is True  # approved: outside, as approved commands run
        assert approver.requests[0].title == "Run command in the background"
        (view,) = runtime.background_tasks()
        pid = view.pid
        assert view.status == "running" and group_alive(pid)
        # The turn ended; the server did not.
        await runtime.submit(Prompt("fetch it, read its log, stop it"))
    finally:
        await runtime.close()
    done = results(runtime)
    assert "hello.txt" in json.loads(done["c2"].content)["stdout"]  # a later turn's command reached it
    log = json.loads(done["c3"].content)
    assert log["status"] == "running" and '"GET / HTTP/1.1" 200' in log["output"], log
    stopped = json.loads(done["c4"].content)
    assert stopped["status"] == "stopped" and stopped["ended"] == "was stopped (task-stop)"
    assert group_alive(pid) == []
    (finished,) = of_type(runtime.events, "task_finished")
    assert finished.stopped_by == "model" and finished.task_id == "1"
    offered = [[t["function"]["name"] for t in r.get("tools", [])] for r in server.requests]
    assert "task-output" not in offered[0]  # no task yet: not offered
    assert offered[1][-2:] == ["task-output", "task-stop"] and offered[1][:-2] == offered[0]  # then added at the end


async def test_the_session_end_stops_what_still_runs(server, open_runtime):
    server.add(tool_calls([call("c1", "terminal-execute", command="echo up; sleep 600", background=True)]), text("ok"))
    runtime = await open_runtime()
    await runtime.submit(Prompt("start it"))
    (view,) = runtime.background_tasks()
    assert json.loads(results(runtime)["c1"].content)["output"] == "up\n"
    await runtime.close()
    assert group_alive(view.pid) == []
    (finished,) = of_type(runtime.events, "task_finished")
    assert finished.stopped_by == "session_end"
    assert finished.message.startswith("Background task 1 (`echo up; sleep 600`) was stopped at the end of the session")


async def test_a_new_session_stops_the_old_ones_tasks(server, open_runtime):
    server.add(tool_calls([call("c1", "terminal-execute", command="sleep 600", background=True)]), text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("start it"))
        (view,) = runtime.background_tasks()
        await runtime.submit(NewSession())
        await wait_for(lambda: of_type(runtime.events, "task_finished"))
        assert group_alive(view.pid) == []
    finally:
        await runtime.close()


async def wait_for(condition, timeout: float = 10.0) -> None:
    """Until `condition()` holds (checked at each step of the event loop's clock), at most `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "condition never held"
        await asyncio.sleep(0.02)


async def test_a_task_that_ended_between_turns_is_one_line_in_the_next_request(server, open_runtime, workspace):
    command = "while [ ! -f go ]; do sleep 0.05; done; echo built; exit 3"
    server.add(
        tool_calls([call("c1", "terminal-execute", command=command, background=True)]),
        text("building"),
        text("I see it failed"),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("build in the background"))
        (workspace / "go").write_text("")
        await wait_for(lambda: of_type(runtime.events, "task_finished"))
        await runtime.submit(Prompt("how is it going?"))
    finally:
        await runtime.close()
    sent = server.requests[-1]["messages"]
    notes = [m["content"] for m in sent if m["role"] == "user" and "Background task" in str(m["content"])]
    assert len(notes) == 1 and f"Background task 1 (`{command}`) exited with code 3" in str(notes[0])
    assert sent[-1]["content"] == "how is it going?" or "how is it going?" in str(sent[-1]["content"])


async def test_a_denied_background_command_never_starts(server, open_runtime, workspace):
    server.add(tool_calls([call("c1", "terminal-execute", command="touch started", background=True)]), text("ok"))
    runtime = await open_runtime(yolo=False, approver=FakeApprover("deny"))
    try:
        await runtime.submit(Prompt("start it"))
    finally:
        await runtime.close()
    assert results(runtime)["c1"].content.startswith("Error: the user denied")
    assert runtime.background_tasks() == [] and not (workspace / "started").exists()


async def test_a_subagents_tasks_end_with_it(server, open_runtime):
    """A child's table is its own: what it started is stopped when it answers, the parent's stays empty."""
    from tests.subagents.test_subagent_e2e import _in

    task = "Start a watcher and report."
    parent = "delegate it"
    server.add(
        _in(parent, tool_calls([call("s1", "subagent", agent="general", task=task)])),
        _in(task, tool_calls([call("w1", "terminal-execute", command="echo watching; sleep 600", background=True)])),
        _in(task, text("The watcher runs.")),
        _in(parent, text("Done.")),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(parent))
        assert runtime.background_tasks() == []  # not the parent's
        (child,) = await runtime.subagents()
        _, messages = await runtime.subagent_history(child.id)
        (result,) = [m for m in messages if m.role == "tool"]
        assert json.loads(result.content)["output"] == "watching\n"
        assert group_alive(result.meta["pid"]) == []  # gone with the child, the session still open
    finally:
        await runtime.close()
