"""`--output-format stream-json` emits the whole todo list after each todo-write that set it
(a `todo` line right after the call's `tool_result`), and nothing for one that failed."""

from __future__ import annotations

import json

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn

pytestmark = needs_cairn

FIRST = [
    {"content": "Read the parser", "status": "in_progress"},
    {"content": "Fix the return type", "status": "pending"},
]
SECOND = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Fix the return type", "status": "in_progress"},
]


def test_each_todo_write_emits_the_whole_list(workspace):
    with FakeLLMServer(
        [
            tool_calls([("t1", "todo-write", json.dumps({"todos": FIRST}))]),
            tool_calls([("t2", "todo-write", json.dumps({"todos": [{"content": "x", "status": "done"}]}))]),
            tool_calls([("t3", "todo-write", json.dumps({"todos": SECOND}))]),
            text("On the return type now."),
        ]
    ) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "fix parse()", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    todos = [e for e in lines if e["type"] == "todo"]
    assert todos == [{"type": "todo", "todos": FIRST}, {"type": "todo", "todos": SECOND}]
    # Each list follows the result of the call that set it; the refused one (bad status) set none.
    order = [(e["type"], e.get("id")) for e in lines if e["type"] in ("tool_result", "todo")]
    assert order == [
        ("tool_result", "t1"),
        ("todo", None),
        ("tool_result", "t2"),
        ("tool_result", "t3"),
        ("todo", None),
    ]
    failed = next(e for e in lines if e["type"] == "tool_result" and e["id"] == "t2")
    assert failed["status"] == "error" and failed["content"].startswith("Error: invalid arguments for todo-write")
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "ok"
