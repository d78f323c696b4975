"""The todo list pinned above the prompt (issue 29), as SVG snapshots at 80×24 and 120×40: a
list of seven, three done, one in progress. At 80×24 the panel keeps to five lines (the title,
the item in progress with the one before it, "… N done" / "… N more"); at 120×40 it shows the
whole list; an item too long for the row ends with "…". The todo-write call in the chat is
one line ("Updated todos 3/7"). Collapsed
(Ctrl+T), the panel is its title line with the item in progress. Same rules as
test_snapshots.py: fixed messages and events, no runtime, no clock; accept a deliberate change
with `pytest tests/ui/test_todo_snapshot.py --snapshot-update` and look at the pictures."""

from __future__ import annotations

import pytest

from agent.session.models import Message
from tests.ui.test_snapshots import SIZES, call, make_app, settle

TODOS = [
    {"content": "Read the parser and its tests", "status": "completed"},
    {"content": "Find where Vec<T> leaks into the Python API", "status": "completed"},
    {"content": "Write a failing test for parse()", "status": "completed"},
    {
        "content": "Fix the return type of parse() to list[str] where it is called, with a migration note for users",
        "status": "in_progress",
    },
    {"content": "Run pytest", "status": "pending"},
    {"content": "Run mypy on src/", "status": "pending"},
    {"content": "Update the changelog", "status": "pending"},
]


@pytest.fixture(autouse=True)
def fixed_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


def conversation() -> list[Message]:
    write = call("t1", "todo-write", {"todos": TODOS})
    return [
        Message(id="u1", role="user", content="Make parse() return list[str], with a test."),
        Message(id="a1", role="assistant", content="I'll plan it first.", tool_calls=[write]),
        Message(
            id="r-t1",
            role="tool",
            tool_call_id="t1",
            tool_name="todo-write",
            content="(the list as text)",
            meta={"todos": TODOS},
        ),
        Message(id="a2", role="assistant", content="The test fails as expected; fixing the return type now."),
    ]


async def show_list(pilot) -> None:
    """The chat as a resumed session draws it, the panel as its history restores it."""
    app = pilot.app
    history = conversation()
    app.chat.show_history(history)
    app.todo_panel.show(TODOS)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_todo_panel(snap_compare, tmp_path, size):
    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=show_list)


def test_todo_panel_collapsed(snap_compare, tmp_path):
    async def run_before(pilot) -> None:
        await show_list(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=(80, 24), run_before=run_before)
