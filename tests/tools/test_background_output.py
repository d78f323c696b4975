"""A background task's output and rules (issue 47): bounded in memory with a count of what was
dropped, read once by the model, waited for up to a cap; started under the same rules as any
command (no cairn key in its environment; a command run unasked runs in the sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.process.secrets import remember_secret
from agent.settings.config import load_settings
from agent.tools.background_tasks import BackgroundTasks, OutputTail
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.sandbox import Sandbox
from agent.tools.task_output import TaskOutput
from agent.tools.task_stop import TaskStop
from agent.tools.terminal import Terminal
from tests.tools.test_background_tasks import group_alive

needs_sandbox = pytest.mark.skipif(not Sandbox(Path("/")).probe(), reason="bubblewrap cannot sandbox on this machine")


def test_the_tail_keeps_the_newest_bytes_and_counts_what_the_reader_missed():
    tail = OutputTail(keep=10)
    tail.feed(b"0123456789")
    data, dropped, offset = tail.since(0, 4)
    assert (data, dropped, offset) == (b"0123", 0, 4)
    tail.feed(b"abcdefghij")  # the first ten bytes leave memory
    data, dropped, offset = tail.since(offset, 100)
    assert (data, dropped, offset) == (b"abcdefghij", 6, 20)
    assert tail.since(offset, 100) == (b"", 0, 20)


async def start(ctx: ToolContext, command: str) -> dict:
    result = await Terminal().run(Terminal.Args.model_validate({"command": command, "background": True}), ctx)
    return json.loads(result.content) | {"_meta": result.meta, "_error": result.is_error}


async def output(ctx: ToolContext, task_id: str | int, wait: float | None = None) -> dict:
    args = TaskOutput.Args.model_validate({"taskId": task_id, "waitSeconds": wait})
    return json.loads((await TaskOutput().run(args, ctx)).content)


@pytest.fixture
async def ctx(workspace):
    context = ToolContext(workspace=workspace, permissions=Permissions(None, yolo=True), tasks=BackgroundTasks())
    yield context
    assert context.tasks is not None
    await context.tasks.end_all()


async def test_output_is_given_once_and_the_exit_code_when_it_ends(ctx, workspace):
    shown = await start(ctx, "echo first; while [ ! -f go ]; do sleep 0.05; done; echo second; exit 4")
    assert shown["output"] == "first\n" and shown["status"] == "running" and not shown["_error"]
    assert (await output(ctx, "1"))["output"] == ""  # nothing new
    (workspace / "go").write_text("")
    ended = await output(ctx, "1", wait=1e9)  # waits for the end (capped at 30 s)
    assert ended["output"] == "second\n" and ended["exitCode"] == 4 and ended["ended"] == "exited with code 4"
    assert ctx.tasks.take_unseen_endings() == []  # the model saw how it ended: no note


async def test_a_long_output_is_read_in_bounded_pieces(ctx):
    started = await start(ctx, "head -c 100000 /dev/zero | tr '\\0' x; echo")
    first = await output(ctx, "1", wait=30)
    assert len(first["output"]) == 32 * 1024 and "more bytes" in first["more"]
    pieces = [started, first]
    while "more" in pieces[-1]:
        pieces.append(await output(ctx, "1"))
    # The start's first second, then task-output's: 32 KiB at most each, nothing lost or repeated.
    assert all(len(p["output"]) <= 32 * 1024 for p in pieces)
    assert "".join(p["output"] for p in pieces) == "x" * 100_000 + "\n"


async def test_stop_ends_the_whole_group_and_unknown_ids_are_errors(ctx):
    shown = await start(ctx, "sleep 600 & sleep 600; wait")
    pid = shown["_meta"]["pid"]
    assert len(group_alive(pid)) >= 2  # the shell and what it started in the background
    stopped = await TaskStop().run(TaskStop.Args.model_validate({"taskId": "1"}), ctx)
    assert json.loads(stopped.content)["status"] == "stopped" and group_alive(pid) == []
    with pytest.raises(Exception, match="no background task '9'"):
        await TaskStop().run(TaskStop.Args.model_validate({"taskId": "9"}), ctx)


async def test_cairns_key_never_reaches_a_background_command(ctx, monkeypatch):
    monkeypatch.setenv("CAIRN_API_KEY", "sk-cairn-own-key-123456")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-abcdef")
    remember_secret("sk-provider-key-abcdef")
    shown = await start(ctx, "echo own=$CAIRN_API_KEY provider=$OPENAI_API_KEY; exit 0")
    assert shown["output"] == "own= provider=\n"


@needs_sandbox
async def test_a_command_run_unasked_runs_in_the_sandbox(workspace):
    """A user's allow rule runs `sleep` unasked, so in the sandbox, and the model is told what that means."""
    (workspace / "app.log").write_text("booted\n")
    flags = {"model": "openai/fake-model", "api_key": "sk-test", "permissions": {"allow_commands": ["sleep"]}}
    settings = load_settings(workspace, flags=flags)
    ctx = ToolContext(workspace=workspace, permissions=Permissions.from_settings(settings), tasks=BackgroundTasks())
    assert ctx.permissions.sandbox is not None and ctx.permissions.sandbox.probe()  # as the runtime does at start
    try:
        shown = await start(ctx, "cat app.log && sleep 600")
        assert shown["_meta"]["sandbox"] == "workspace-write" and "outsideSandbox" not in shown["_meta"]
        assert shown["output"] == "booted\n"
        assert "It runs in the sandbox: no network" in shown["note"]
        assert (await output(ctx, "1"))["status"] == "running"
    finally:
        await ctx.tasks.end_all()


async def test_a_character_cut_between_reads_is_given_whole_and_a_number_is_an_id(ctx):
    """32 KiB pieces never split a UTF-8 character; `taskId: 1` (a number) names task "1"."""
    started = await start(ctx, "printf 'a%.0s' $(seq 32767); printf 'é and the rest'")
    pieces = [started, await output(ctx, 1, wait=30)]
    while "more" in pieces[-1]:
        pieces.append(await output(ctx, 1))
    text = "".join(p["output"] for p in pieces)
    assert text == "a" * 32767 + "é and the rest"  # no replacement character where a piece ended
