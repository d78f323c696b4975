"""The todo list in the TUI (issue 29) against the fake server: a scripted todo-write fills the
pinned panel (and is one line in the chat); `/compact` leaves it; resuming the session in a
new app shows it again, from the drawn tail or, when the tail does not reach back to it, from
the whole path; a finished list hides when its turn ends; Ctrl+T collapses and expands it.
The panel's choice of rows is checked on its own, for every list shape that fits a size."""

from __future__ import annotations

import json

import pytest

import agent.ui.app
from agent.ui.app import CairnApp
from agent.ui.widgets.todo import ROW_CLASSES, focus, rows_for, window
from agent.ui.widgets.tool_block import ToolBlock
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import run_prompt, wait_for, wait_ready

SIZE = (100, 30)
TODOS = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the return type", "status": "in_progress"},
    {"content": "Run mypy", "status": "pending"},
]
ROWS = ["Todos 1/3", "✔ Read the parser", "▶ Fix the return type", "☐ Run mypy"]


def shown(app) -> list[str]:
    """The panel's lines as the user reads them (title without its key hint); [] when hidden."""
    panel = app.todo_panel
    if not panel.display:
        return []
    lines = [str(w.render()) for w in panel.query("Static") if w.display]
    return [lines[0].split("  ")[0], *lines[1:]]


def todo_write(call_id: str, todos: list[dict]):
    return tool_calls([(call_id, "todo-write", json.dumps({"todos": todos}))])


async def test_the_list_is_pinned_survives_compact_and_comes_back_on_resume(make_settings, server, monkeypatch):
    server.add(
        todo_write("t1", TODOS), text("Fixing the return type."), text("## Summary\nParser work."), text("On it.")
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert shown(app) == []  # a new session has no list
        await run_prompt(pilot, "fix parse() step by step")
        assert shown(app) == ROWS
        block = app.chat.query_one(ToolBlock)
        assert block.summary == "Updated todos 1/3" and not block.query("Collapsible")  # one line, nothing to open
        await run_prompt(pilot, "/compact")
        assert shown(app) == ROWS
        await run_prompt(pilot, "go on")  # the newest messages no longer hold the list
        assert shown(app) == ROWS
        session_id = app.runtime.session.id
        await app.quit_app()

    resumed = CairnApp(make_settings(), resume_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: shown(resumed) == ROWS, what="the list restored from the drawn history")

    # A tail that does not reach back to the list (a long session): it is read from the whole path.
    monkeypatch.setattr(agent.ui.app, "MAX_MOUNTED", 2)
    again = CairnApp(make_settings(), resume_id=session_id)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: shown(again) == ROWS, what="the list read from the whole path")
        rows = [w for w in again.todo_panel.query(".todo-row") if w.display]
        assert [r.has_class(ROW_CLASSES[t["status"]]) for r, t in zip(rows, TODOS, strict=True)] == [True] * 3


async def test_a_finished_list_hides_when_its_turn_ends_and_ctrl_t_toggles(make_settings, server):
    done = [{**t, "status": "completed"} for t in TODOS]
    server.add(todo_write("t1", TODOS), text("Working."), todo_write("t2", done), text("All done."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("ctrl+t")  # no list yet: a word in the status line, nothing else
        assert shown(app) == []
        await run_prompt(pilot, "start")
        assert shown(app) == ROWS
        await pilot.press("ctrl+t")
        assert shown(app)[0] == "Todos 1/3" and len(shown(app)) == 1  # collapsed to its title
        assert "▶ Fix the return type" in str(app.todo_panel.query_one(".todo-title").render())
        await pilot.press("ctrl+t")
        assert shown(app) == ROWS
        await run_prompt(pilot, "finish it")
        assert shown(app) == []  # all done and the turn over: out of the way
        assert app.todo_panel.todos == done
        await pilot.press("ctrl+t")  # still there to look at
        assert shown(app) == ["Todos 3/3", "✔ Read the parser", "✔ Fix the return type", "✔ Run mypy"]


async def test_new_session_clears_the_list(make_settings, server):
    server.add(todo_write("t1", TODOS), text("Working."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "start")
        assert shown(app) == ROWS
        await run_prompt(pilot, "/new")
        assert shown(app) == []


# -- which rows are shown -------------------------------------------------------------------
def _lines(todos, rows) -> int:
    start, end = window(todos, rows)
    return (end - start) + (start > 0) + (end < len(todos))


def _lists(max_len: int):
    for count in range(1, max_len + 1):
        for active in range(-1, count):
            for done in range(0, count + 1):
                yield [
                    {
                        "content": str(i),
                        "status": "in_progress" if i == active else "completed" if i < done else "pending",
                    }
                    for i in range(count)
                ]


@pytest.mark.parametrize("rows", [3, 4, 5, 8])
def test_the_window_fits_and_always_shows_the_item_that_matters(rows):
    for todos in _lists(12):
        start, end = window(todos, rows)
        assert 0 <= start <= focus(todos) < end <= len(todos)
        assert _lines(todos, rows) <= rows
        if len(todos) <= rows:
            assert (start, end) == (0, len(todos))
        else:
            assert _lines(todos, rows) == rows  # no row wasted


def test_the_window_keeps_the_item_before_for_context():
    todos = [{"content": str(i), "status": "completed" if i < 5 else "pending"} for i in range(10)]
    todos[5]["status"] = "in_progress"
    assert window(todos, 4) == (4, 6)  # "… 4 done", 4, ▶ 5, "… 4 more"


def test_a_few_rows_at_80x24_more_when_taller():
    assert rows_for(24) == 4
    assert rows_for(40) == 8
    assert rows_for(10) == 3
