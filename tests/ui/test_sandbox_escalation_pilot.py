"""The walk's sandbox step at 80×24: "always" for a script that talks to a server on this
machine's localhost, its next run refused inside the sandbox, and the question to run it
outside saying why it asks."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agent.ui.app import CairnApp
from agent.ui.screens.approval import ApprovalScreen
from tests.fakes.llm_server import text, tool_calls
from tests.fakes.loopback_server import ping_script, pong_server
from tests.tools.test_sandbox import needs_sandbox
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

# Found on PATH inside the sandbox too: a virtualenv under /tmp (a CI clone) is hidden by the
# sandbox's private /tmp, so `sys.executable` may not exist there.
SYSTEM_PYTHON = "python3"


@pytest.fixture
def host_server() -> Iterator[int]:
    with pong_server() as port:
        yield port


@needs_sandbox
async def test_the_escalation_question_says_the_sandboxed_run_was_refused_by_localhost(
    make_settings,
    server,
    workspace,
    host_server,
):
    (workspace / "ping.py").write_text(ping_script(host_server))
    command = f"{SYSTEM_PYTHON} ping.py"
    run = json.dumps({"command": command})
    outside = json.dumps({"command": command, "outsideSandbox": True})
    server.add(
        tool_calls([("c1", "terminal-execute", run)]),  # asked: "always", runs as approved
        tool_calls([("c2", "terminal-execute", run)]),  # the rule's: in the sandbox, refused
        tool_calls([("c3", "terminal-execute", outside)]),  # asks to leave the sandbox
        text("Done."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "ping the server")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the first question")
        await pilot.press("a")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApprovalScreen)
                and app.screen.request.escalate
                and bool(app.screen.query("#approval-note"))
            ),  # composed (a loaded machine is slower)
            READY_TIMEOUT,
            "the question to run it outside",
        )
        note = str(app.screen.query_one("#approval-note").render())
        assert "Its sandboxed run failed: Connection refused" in note and "localhost" in note
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        first, sandboxed, escalated = (block.result.meta for block in app.chat.tool_blocks)
        assert first["outsideSandbox"] and first["permission"]["decision"] == "always"
        assert sandboxed["sandbox"] == "workspace-write" and sandboxed["permission"]["decision"] == "rule"
        assert escalated["outsideSandbox"] and escalated["exitCode"] == 0
