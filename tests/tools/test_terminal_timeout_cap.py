"""The command timeout has a cap (issue 43, class 7): `tools.max_command_timeout`, 600 s by
default, whatever the model asks for (it asked for 1e9 s, and got it)."""

from __future__ import annotations

import json

from agent.runtime.ops import Prompt
from agent.settings.schema import Settings
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.terminal import Terminal
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type

NOTE = "[cairn] The timeout asked for is above the cap (tools.max_command_timeout): ran with"


async def run(ctx, **args):
    return await Terminal().run(Terminal.Args.model_validate(args), ctx)


def test_the_cap_is_ten_minutes_by_default():
    assert Settings().tools.max_command_timeout == 600.0
    assert ToolContext.max_command_timeout == 600.0  # a bare context (a tool's own tests) too


async def test_a_huge_timeout_is_clamped_to_the_cap_and_said(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, yolo=True))
    res = await run(ctx, command="echo hi", timeout=1e9)
    out = json.loads(res.content)
    assert out["stdout"] == "hi\n" and out["stderr"] == f"{NOTE} 600 s."
    assert res.meta["timeoutClamped"] == {"asked": 1e9, "used": 600.0} and not res.is_error


async def test_the_clamped_timeout_is_the_one_that_kills(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, yolo=True), max_command_timeout=0.2)
    res = await run(ctx, command="sleep 30", timeout=1e9)
    assert res.meta["timedOut"] is True and res.is_error
    assert "Command timed out after 0.2 s" in json.loads(res.content)["stderr"]


async def test_a_timeout_within_the_cap_is_kept_without_a_note(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, yolo=True), max_command_timeout=60)
    res = await run(ctx, command="echo hi", timeout=59)
    assert json.loads(res.content)["stderr"] == "" and "timeoutClamped" not in res.meta


async def test_the_setting_reaches_the_tool(server, open_runtime):
    server.add(tool_calls([("c1", "terminal-execute", {"command": "echo hi", "timeout": 1e9})]), text("done"))
    runtime = await open_runtime(flags={"tools": {"max_command_timeout": 5}})
    try:
        await runtime.submit(Prompt("run it"))
    finally:
        await runtime.close()
    (finished,) = of_type(runtime.events, "tool_finished")
    assert finished.message.meta["timeoutClamped"] == {"asked": 1e9, "used": 5.0}
    assert f"{NOTE} 5 s." in json.loads(finished.message.content)["stderr"]
