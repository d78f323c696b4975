"""terminal-execute: real subprocesses; process groups die on timeout and on interrupt."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.permissions import Permissions
from agent.tools.terminal import StreamCapture, Terminal
from tests.fakes.approver import FakeApprover


async def run(ctx, **args):
    return await Terminal().run(Terminal.Args.model_validate(args), ctx)


@pytest.fixture
def ctx(workspace):
    return ToolContext(workspace=workspace, permissions=Permissions(None, yolo=True))


def alive(pid: int) -> bool:
    """Running, not a zombie (a killed orphan may wait for a reaper that never comes)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


async def wait_dead(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_stdout_and_exit_code(ctx):
    res = await run(ctx, command="echo hello")
    assert not res.is_error
    assert json.loads(res.content) == {"command": "echo hello", "stdout": "hello\n", "stderr": "", "exitCode": 0}
    assert list(json.loads(res.content)) == ["command", "stdout", "stderr", "exitCode"]
    assert res.meta["exitCode"] == 0 and res.meta["timedOut"] is False
    assert isinstance(res.meta["durationMs"], int)


async def test_stderr_and_failure(ctx):
    res = await run(ctx, command="echo oops >&2; exit 3")
    assert res.is_error
    data = json.loads(res.content)
    assert data["stderr"] == "oops\n" and data["exitCode"] == 3 and data["stdout"] == ""


async def test_unicode_is_not_escaped(ctx):
    res = await run(ctx, command="echo 'héllo 世界'")
    assert "héllo 世界" in res.content


async def test_environment_and_working_directory(ctx, workspace):
    (workspace / "sub").mkdir()
    res = await run(ctx, command='pwd; echo "$PAGER $GIT_PAGER $TERM $NO_COLOR"', workingDirectory="sub")
    out = json.loads(res.content)["stdout"].splitlines()
    assert out == [str((workspace / "sub").resolve()), "cat cat dumb 1"]


async def test_stdin_is_empty(ctx):
    res = await asyncio.wait_for(run(ctx, command="cat; echo done"), timeout=5)
    assert json.loads(res.content)["stdout"] == "done\n"


async def test_working_directory_outside_is_refused(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None))
    with pytest.raises(ToolError, match="outside the workspace"):
        await run(ctx, command="ls", workingDirectory="..")


async def test_approval_request_and_denial(workspace):
    approver = FakeApprover("deny")
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver))
    res = await run(ctx, command="touch made.txt && echo hi")
    assert res.is_error and res.content.startswith("Error: the user denied")
    assert not (workspace / "made.txt").exists()
    [req] = approver.requests
    assert (req.tool, req.kind, req.key, req.title, req.detail) == (
        "terminal-execute",
        "command",
        "command:touch",
        "Run command",
        "touch made.txt && echo hi",
    )


async def test_always_covers_the_same_program(workspace):
    approver = FakeApprover("always")
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver, workspace=workspace))
    await run(ctx, command="printf 1")
    await run(ctx, command="printf 2")
    await run(ctx, command="sleep 0")
    assert [r.key for r in approver.requests] == ["command:printf", "command:sleep"]


async def test_timeout_kills_the_whole_group(ctx):
    # The command sleeps 100 s: returning at all with timedOut is the timeout firing (no
    # elapsed-time bound, which flakes under load).
    res = await run(ctx, command="sh -c 'sleep 100 & echo $!; sleep 100'", timeout=1)
    assert res.is_error and res.meta["timedOut"] is True
    data = json.loads(res.content)  # still the JSON, with a note
    assert "timed out after 1 s" in data["stderr"]
    child = int(data["stdout"].split()[0])
    assert await wait_dead(child)
    assert not ctx.processes


async def test_timeout_escalates_to_sigkill(ctx):
    res = await run(ctx, command="trap '' TERM; echo ready; sleep 100", timeout=0.5)
    assert res.meta["timedOut"] is True
    assert json.loads(res.content)["stdout"] == "ready\n"


async def test_cancellation_kills_the_group(ctx, workspace):
    pidfile = workspace / "pids"
    task = asyncio.create_task(run(ctx, command=f"sleep 100 & echo $! > {pidfile}; sleep 100"))
    for _ in range(100):
        await asyncio.sleep(0.05)
        if pidfile.exists() and pidfile.read_text().strip():
            break
    [proc] = list(ctx.processes)
    child = int(pidfile.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_dead(child)
    assert await wait_dead(proc.pid)
    assert not ctx.processes


async def test_background_child_holding_pipes_does_not_hang(ctx, workspace):
    """The shell exits at once; its background child keeps stdout open until the test lets it
    go, after the run returned. Waiting for the pipes would end only at the timeout."""
    release = workspace / "release"
    child = f"(while [ ! -e {release} ]; do sleep 0.05; done &) ; echo out"
    try:
        res = await run(ctx, command=child, timeout=20)
    finally:
        release.touch()
    assert res.meta["timedOut"] is False and not res.is_error
    assert json.loads(res.content)["stdout"] == "out\n"


async def test_output_up_to_the_kept_size_comes_back_whole(ctx):
    import agent.tools.terminal as terminal

    size = terminal.STREAM_KEEP_BYTES - 1024 * 1024
    res = await run(ctx, command=f"head -c {size} /dev/zero | tr '\\0' a; echo end >&2")
    data = json.loads(res.content)
    assert len(data["stdout"]) == size and set(data["stdout"]) == {"a"}
    assert data["stderr"] == "end\n"
    assert "droppedBytes" not in res.meta


async def test_memory_cap_keeps_head_and_tail(ctx, monkeypatch):
    import agent.tools.terminal as terminal

    monkeypatch.setattr(terminal, "STREAM_KEEP_BYTES", 1000)
    res = await run(ctx, command="printf 'START'; head -c 100000 /dev/zero | tr '\\0' m; printf 'END'")
    out = json.loads(res.content)["stdout"]
    assert len(out) < 1100
    assert out.startswith("START") and out.endswith("END")
    assert "bytes of output dropped" in out
    assert res.meta["droppedBytes"]["stdout"] == 100008 - 1000


def test_stream_capture_accounting():
    cap = StreamCapture(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qr"):
        cap.feed(chunk)
    assert cap.dropped == 18 - 10
    assert cap.text() == "abcde" + "\n… [8 bytes of output dropped here to protect memory] …\n" + "nopqr"


async def test_invalid_utf8_is_replaced(ctx):
    res = await run(ctx, command="printf 'ok \\377\\376 end'")
    assert json.loads(res.content)["stdout"] == "ok \ufffd\ufffd end"


async def test_process_registered_while_running(ctx, workspace):
    # The command runs until the test says so: no guess of how long a spawn takes on a busy machine.
    go = workspace / "go"
    task = asyncio.create_task(run(ctx, command=f"while [ ! -e {go} ]; do sleep 0.01; done; echo done"))
    deadline = time.monotonic() + 30
    while not ctx.processes:
        assert not task.done() and time.monotonic() < deadline, "the command was never registered"
        await asyncio.sleep(0.01)
    assert len(ctx.processes) == 1 and not task.done()
    go.touch()
    res = await asyncio.wait_for(task, 30)
    assert json.loads(res.content)["stdout"] == "done\n"
    assert not ctx.processes
