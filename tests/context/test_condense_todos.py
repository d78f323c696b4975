"""The todo list survives a condense (issue 29): the summary carries the newest list as
todo-write set it, whatever the summarising model wrote, so the request after a `/compact`
still holds it; a second condense with no new todo-write carries it again."""

from __future__ import annotations

import json

from agent.runtime.ops import Compact, Prompt
from agent.tools.todos import current_todos
from tests.fakes.llm_server import text, tool_calls

TODOS = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the return type", "status": "in_progress"},
    {"content": "Run mypy", "status": "pending"},
]
LIST_TEXT = "[x] Read the parser\n[~] Fix the return type\n[ ] Run mypy\n1/3 completed"


def _summary_of(request: dict) -> str:
    """The request's summary message (the first user message after a condense)."""
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


async def test_the_request_after_a_compact_carries_the_todo_list(server, open_runtime):
    server.add(
        tool_calls([("t1", "todo-write", json.dumps({"todos": TODOS}))]),
        text("Working on it."),
        text("## Summary\nThe parser was read."),  # says nothing of the list
        text("Going on."),
        text("## Summary\nStill on the return type."),
        text("Still going."),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("fix parse() in three steps"))
        await runtime.submit(Compact())
        await runtime.submit(Prompt("go on"))
        await runtime.submit(Compact())  # no todo-write since the first summary: the list goes on
        await runtime.submit(Prompt("and now?"))
        history = await runtime.history()
    finally:
        await runtime.close()
    requests = server.requests
    assert "the current todo list" in json.dumps(requests[2]["messages"])  # the summariser is told it is attached
    for after_compact in (requests[3], requests[5]):
        summary = _summary_of(after_compact)
        assert "## Todo list" in summary and LIST_TEXT in summary
    summaries = [m for m in history if m.kind == "summary"]
    assert [m.meta["todos"] for m in summaries] == [TODOS, TODOS]
    assert current_todos(history) == TODOS


async def test_no_list_no_section(server, open_runtime):
    server.add(text("Hi."), text("## Summary\nA greeting."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hello"))
        await runtime.submit(Compact())
        history = await runtime.history()
    finally:
        await runtime.close()
    summary = next(m for m in history if m.kind == "summary")
    assert "## Todo list" not in (summary.content or "") and "todos" not in summary.meta
    assert "todo list" not in json.dumps(server.requests[1]["messages"])
