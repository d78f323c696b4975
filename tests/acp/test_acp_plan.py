"""Issue 29 over ACP: each todo-write reaches the editor as a `plan` session update carrying
the whole list (`entries: [{content, priority, status}]`), right after the call's
`tool_call_update`; loading the session replays it. The installed `cairn acp`, driven by the
`agent-client-protocol` package's client side, against the scripted server."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("acp")
from acp import PROTOCOL_VERSION, text_block  # noqa: E402

from tests.acp.test_acp_end_to_end import CAIRN, TIMEOUT, Editor  # noqa: E402
from tests.acp.test_acp_thinking import start  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls  # noqa: E402

pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")

FIRST = [
    {"content": "Read the parser", "status": "in_progress"},
    {"content": "Fix the return type", "status": "pending"},
    {"content": "Run mypy", "status": "pending"},
]
SECOND = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the return type", "status": "in_progress", "priority": "high"},  # opencode's key, kept
    {"content": "Run mypy", "status": "pending"},
]


def plans(editor: Editor) -> list[list[tuple[str, str, str]]]:
    return [
        [(e.content, e.priority, e.status) for e in u.entries] for u in editor.updates if u.session_update == "plan"
    ]


async def test_todo_write_becomes_a_plan_update_and_is_replayed_on_load(workspace):
    with FakeLLMServer(
        [
            tool_calls([("t1", "todo-write", json.dumps({"todos": FIRST}))], text="Planning."),
            tool_calls([("t2", "todo-write", json.dumps({"todos": SECOND}))]),
            text("On the return type now."),
        ]
    ) as srv:
        editor = Editor()
        async with start(editor, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("fix parse()")]), TIMEOUT
            )
        assert answer.stop_reason == "end_turn"
        assert editor.permissions == []  # the todo list needs no approval
        expected = [
            [("Read the parser", "medium", "in_progress"), ("Fix the return type", "medium", "pending"),
             ("Run mypy", "medium", "pending")],
            [("Read the parser", "medium", "completed"), ("Fix the return type", "high", "in_progress"),
             ("Run mypy", "medium", "pending")],
        ]  # fmt: skip
        assert plans(editor) == expected
        kinds = editor.kinds()
        first_plan = kinds.index("plan")
        assert kinds[first_plan - 1] == "tool_call_update"  # the call finished, then its list

        later = Editor()
        async with start(later, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            await asyncio.wait_for(
                conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[]), TIMEOUT
            )
        assert plans(later)[-1] == expected[-1]  # the editor ends on the current list
