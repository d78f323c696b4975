"""`todo-write`: the whole list replaced each call, kept in the result's meta, a short text for
the model, other agents' keys accepted, a bad status refused with an `Error:` it can act on;
and the newest list on a path is the current one (agent/tools/todos.py)."""

from __future__ import annotations

import json

import pytest

from agent.session.models import Message, ToolCall
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.registry import default_registry
from agent.tools.todos import as_text, current_todos, progress, todos_of


@pytest.fixture
def ctx(workspace):
    return ToolContext(workspace=workspace, permissions=Permissions(None))


async def write(ctx, arguments) -> object:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return await default_registry().execute(ToolCall(id="t1", name="todo-write", arguments=raw), ctx)


async def test_the_list_is_stored_in_meta_and_read_back_short(ctx):
    todos = [
        {"content": "Read the parser", "status": "completed"},
        {"content": "Fix the return type", "status": "in_progress"},
        {"content": "Run mypy", "status": "pending"},
    ]
    result = await write(ctx, {"todos": todos})
    assert not result.is_error
    assert result.meta == {"todos": todos}
    assert result.content == "[x] Read the parser\n[~] Fix the return type\n[ ] Run mypy\n1/3 completed"


async def test_it_asks_for_no_approval(ctx):
    result = await write(ctx, {"todos": [{"content": "a", "status": "pending"}]})
    assert "permission" not in result.meta  # no check was made, nothing was asked


async def test_claude_code_and_opencode_keys_are_kept_not_refused(ctx):
    todos = [
        {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
        {"content": "Ship", "status": "pending", "priority": "high", "id": "2"},
    ]
    result = await write(ctx, {"todos": todos})
    assert not result.is_error
    assert result.meta["todos"] == todos


async def test_a_status_spelt_another_way_is_the_same_status(ctx):
    result = await write(ctx, {"todos": [{"content": "a", "status": "In-Progress"}]})
    assert result.meta["todos"] == [{"content": "a", "status": "in_progress"}]


@pytest.mark.parametrize("status", ["done", "blocked", "", 3, None])
async def test_a_bad_status_is_a_clear_error(ctx, status):
    result = await write(ctx, {"todos": [{"content": "ok", "status": "pending"}, {"content": "x", "status": status}]})
    assert result.is_error
    assert result.content.startswith("Error: invalid arguments for todo-write: todos item 1.status")
    assert "'pending', 'in_progress' or 'completed'" in result.content
    assert result.meta == {}


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({}, "todos: missing required field"),
        ({"todos": "buy milk"}, "todos:"),
        ({"todos": [{"status": "pending"}]}, "todos item 0.content: missing required field"),
        ({"todos": [{"content": "   ", "status": "pending"}]}, "todos item 0.content"),
        ({"todos": [{"content": "a", "status": "pending"}] * 101}, "todos:"),
    ],
)
async def test_malformed_lists_are_errors(ctx, arguments, says):
    result = await write(ctx, arguments)
    assert result.is_error and says in result.content


async def test_an_empty_list_clears_it(ctx):
    result = await write(ctx, {"todos": []})
    assert not result.is_error
    assert result.meta == {"todos": []} and result.content == "The todo list is empty."


def test_the_model_sees_content_and_status_only():
    definition = next(d for d in default_registry().definitions() if d["function"]["name"] == "todo-write")
    item = definition["function"]["parameters"]["properties"]["todos"]["items"]
    assert set(item["properties"]) == {"content", "status"}
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert "additionalProperties" not in item
    description = definition["function"]["description"]
    assert "in_progress" in description and "completed" in description and "trivial" in description


def _result(todos, *, status="ok", name="todo-write") -> Message:
    return Message(role="tool", tool_call_id="c", tool_name=name, status=status, content="", meta={"todos": todos})


def test_the_newest_list_on_the_path_is_current():
    first = [{"content": "a", "status": "pending"}]
    second = [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}]
    path = [
        Message(role="user", content="go"),
        _result(first),
        _result([{"content": "never", "status": "pending"}], status="error"),  # a failed call changes nothing
        _result(second),
        Message(role="assistant", content="working"),
        _result([{"content": "not mine", "status": "pending"}], name="terminal-execute"),
    ]
    assert current_todos(path) == second
    assert current_todos(path[:3]) == first
    assert current_todos(path[:1]) == []
    assert progress(second) == "1/2"


def test_a_summary_carries_the_list():
    todos = [{"content": "a", "status": "in_progress"}]
    summary = Message(role="user", kind="summary", content="…", meta={"todos": todos})
    assert todos_of(summary) == todos
    assert current_todos([_result([]), summary]) == todos
    assert todos_of(Message(role="user", content="x", meta={"todos": todos})) is None  # only results and summaries


def test_as_text_keeps_each_item_on_one_line():
    assert as_text([{"content": "two\nlines", "status": "pending"}]) == "[ ] two lines\n0/1 completed"
