"""Permission modes as ACP session modes, through the installed `cairn acp` and the package's own
client side: `session/new` lists them, `session/set_mode` switches and the next edit behaves per
mode (refused in plan mode, unasked in acceptEdits), exit-plan-mode is asked as a permission
request whose answer switches the mode, reported as `current_mode_update`."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block  # noqa: E402
from acp.schema import AllowedOutcome, RequestPermissionResponse  # noqa: E402

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls  # noqa: E402

CAIRN = Path(sys.executable).parent / "cairn"
pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
TIMEOUT = 180  # the agent imports litellm: slow on a loaded 2-core machine


class Editor:
    """Records updates and permission requests; a plan is approved with auto-accepted edits."""

    def __init__(self) -> None:
        self.updates: list = []
        self.permissions: list = []

    async def session_update(self, session_id, update, **kwargs) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        ids = [o.option_id for o in options]
        self.permissions.append((tool_call, ids, [o.name for o in options]))
        chosen = "acceptEdits" if "acceptEdits" in ids else "once"
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=chosen, outcome="selected"))

    def modes(self) -> list[str]:
        return [u.current_mode_id for u in self.updates if u.session_update == "current_mode_update"]


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.02)


def _create(call_id: str, name: str):
    return tool_calls([(call_id, "filesystem-create", {"filePath": name, "content": "x\n"})])


async def test_session_modes_switch_and_decide_the_next_edit(workspace):
    plan = "## Plan\n1. Create b.txt"
    with FakeLLMServer(
        [
            _create("c1", "a.txt"),
            text("Planned."),
            _create("c2", "a.txt"),
            text("Made it."),
            tool_calls([("c3", "exit-plan-mode", {"plan": plan})]),
            _create("c4", "b.txt"),
            text("Done."),
        ]
    ) as srv:
        editor = Editor()
        args = ["--model", "openai/fake-model", "--api-base", srv.base_url, "--api-key", "sk-test", "acp"]
        async with spawn_agent_process(editor, str(CAIRN), *args, env=os.environ.copy(), cwd=str(workspace)) as (
            conn,
            _process,
        ):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            sid = session.session_id
            assert session.modes.current_mode_id == "default"
            assert [(m.id, m.name) for m in session.modes.available_modes] == [
                ("default", "Default"),
                ("acceptEdits", "Accept edits"),
                ("plan", "Plan"),
            ]
            assert all(m.description for m in session.modes.available_modes)

            # plan: the edit is refused without asking the editor, the model told why
            await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="plan"), TIMEOUT)
            await asyncio.wait_for(_until(lambda: editor.modes() == ["plan"]), TIMEOUT)
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("make a.txt")]), TIMEOUT)
            assert not (workspace / "a.txt").exists() and editor.permissions == []
            refused = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"]
            assert "You are in plan mode" in refused[0]["content"]

            # acceptEdits: the same edit runs without asking
            await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="acceptEdits"), TIMEOUT)
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("make a.txt")]), TIMEOUT)
            assert (workspace / "a.txt").read_text() == "x\n" and editor.permissions == []

            # plan again; the plan is asked as a permission request and approved with acceptEdits
            await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="plan"), TIMEOUT)
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("plan b.txt")]), TIMEOUT)
            [(call, ids, names)] = editor.permissions
            assert ids == ["acceptEdits", "default", "plan"]
            assert names == ["Yes, and auto-accept edits", "Yes, and ask before edits", "No, keep planning"]
            assert call.tool_call_id == "c3" and call.content[0].content.text == plan
            assert (workspace / "b.txt").read_text() == "x\n"  # after approval: edits run unasked
            assert editor.modes() == ["plan", "acceptEdits", "plan", "acceptEdits"]

            with pytest.raises(acp.RequestError):
                await asyncio.wait_for(conn.set_session_mode(session_id=sid, mode_id="bypassPermissions"), TIMEOUT)
