"""The todo list at 80×24 (issue 46 item 26): a turn that updates the list three times shows
one "Updated todos" line in the chat, the newest (the list itself is in its panel), and the
panel cuts a long item with "…" rather than silently."""

from __future__ import annotations

import json

from agent.ui.app import CairnApp
from agent.ui.widgets.tool_block import ToolBlock
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import run_prompt, wait_for, wait_ready

SIZE = (80, 24)
LONG = "Fix the return type of parse() everywhere it is called and add a migration note for users"


def todo_write(call_id: str, statuses: list[str]):
    todos = [{"content": f"{LONG} ({i})", "status": s} for i, s in enumerate(statuses)]
    return tool_calls([(call_id, "todo-write", json.dumps({"todos": todos}))])


def todo_lines(app) -> list[str]:
    return [b.summary for b in app.chat.query(ToolBlock) if b.display and b.summary.startswith("Updated todos")]


async def test_one_todo_line_per_turn_and_long_items_end_with_an_ellipsis(make_settings, server):
    server.add(
        todo_write("t1", ["in_progress", "pending"]),
        todo_write("t2", ["completed", "in_progress"]),
        todo_write("t3", ["completed", "completed"]),
        text("Both done."),
        todo_write("t4", ["completed", "in_progress"]),
        text("Reopened one."),
    )
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "do the two steps")
        assert todo_lines(app) == ["Updated todos 2/2"]
        await run_prompt(pilot, "reopen the second")
        assert todo_lines(app) == ["Updated todos 2/2", "Updated todos 1/2"]  # one per turn
        await pilot.pause()
        rows = [w for w in app.todo_panel.query(".todo-row") if w.display]
        drawn = [strip.text.rstrip() for row in rows for strip in row.render_lines(row.region.reset_offset)]
        assert drawn and all(line.endswith("…") for line in drawn), drawn
        await app.quit_app()
    again = CairnApp(make_settings(yolo=True), continue_last=True)  # the resumed history draws the same
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: again.chat.query(ToolBlock), what="the resumed history")
        assert todo_lines(again) == ["Updated todos 2/2", "Updated todos 1/2"]
