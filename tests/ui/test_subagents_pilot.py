"""Subagents in the TUI: the call's block shows the agent and what it cost, its live lines
show what the child does, and `/agents N` opens the child's transcript, read-only."""

from __future__ import annotations

import re

from textual.widgets import Markdown

from agent.ui.app import CairnApp
from agent.ui.screens.transcript import TranscriptScreen
from tests.fakes.llm_server import text, tool_calls
from tests.subagents.test_subagent_e2e import _in
from tests.ui.conftest import chat_text, run_prompt, wait_for, wait_ready

SIZE = (80, 24)
PROMPT = "who defines VERSION?"
TASK = "Find where VERSION is defined"


def _result_rows(screen) -> list[str]:
    """The transcript's result rows as drawn (wrapped), each with its indent."""
    from textual.geometry import Region

    rows: list[str] = []
    for widget in screen.query(".transcript-result"):
        strips = widget.render_lines(Region(0, 0, widget.outer_size.width, widget.outer_size.height))
        rows += [strip.text.rstrip() for strip in strips]
    return rows


async def test_agents_opens_the_childs_transcript(make_settings, server, workspace):
    """Issue 46 item 4: /agents says what became of each run (status, time, cost) with hanging
    indents; its transcript wraps a long result line and a refusal whole, shows no store ids."""
    (workspace / "version.py").write_text("VERSION = '1.2.3'  # " + "read by setup.py and docs " * 4 + "END\n")
    server.add(
        _in(PROMPT, tool_calls([("s1", "subagent", {"agent": "explore", "task": TASK})])),
        _in(
            TASK,
            tool_calls(
                [
                    ("r1", "filesystem-read", {"filePath": "version.py"}),
                    ("r2", "terminal-execute", {"command": "rm -rf build && echo cleaned-the-build-folder"}),
                ]
            ),
        ),
        _in(TASK, text("VERSION is defined in version.py line 1.")),
        _in(PROMPT, text("version.py defines it.")),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, PROMPT)
        from agent.ui.widgets import tool_render

        block = app.chat.tool_blocks[0]
        assert tool_render.format_args(block.call) == f"explore: {TASK}"  # the call, by agent and task
        assert block.summary.startswith("2 tool calls · ")  # what the child did, on the collapsed result

        await run_prompt(pilot, "/agents")
        listing = " ".join(chat_text(app).split())
        assert "1. explore: Find where VERSION is defined" in listing
        # openai/fake has no known price: its $0 is not a cost
        assert re.search(r"done · \d+s · cost unknown · 2 tool calls · [0-9a-f]{8}", listing)
        assert "explore: Read-only research" in listing  # and the agents the model can call

        await run_prompt(pilot, "/agents 1")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptScreen), what="the transcript")
        await pilot.pause()
        screen = app.screen
        assert str(screen.query_one("#transcript-title").content) == f"explore: {TASK}"
        assert str(screen.query_one("#transcript-facts").content).startswith("done · ")
        rows = _result_rows(screen)
        drawn = " ".join(" ".join(rows).split())
        assert "END" in drawn and "cleaned-the-build-folder" in drawn  # nothing cut at the edge
        assert all(len(row) <= SIZE[0] for row in rows)
        assert any(row.startswith("    ") and "docs" in row for row in rows[1:])  # wrapped under its text
        shown = " ".join(str(m.source) for m in screen.query(Markdown)) + drawn
        assert "VERSION is defined in version.py line 1." in shown and "call_" not in shown and "s1" not in drawn
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TranscriptScreen), what="the transcript to close")


def test_a_runs_status_time_and_cost_from_what_is_stored():
    """running (no answer yet, a turn on), done, failed, interrupted; a priced model's cost."""
    from agent.session.models import Message, Session
    from agent.ui.commands.agent_runs import agent_runs, shown_title

    def child(i: int) -> Session:
        return Session(
            id=f"c{i}", title=f"explore: task {i}", agent="explore", parent_call_id=f"k{i}", created_at=1_000
        )

    def answer(i: int, status: str = "ok", **meta) -> Message:
        sub = {"model": "anthropic/claude-sonnet-4-5", "tool_calls": 1, "status": meta.pop("child", "ok")}
        return Message(
            role="tool", tool_call_id=f"k{i}", status=status, created_at=13_000, meta={"subagent": sub, **meta}
        )

    billed = [answer(1, cost=0.0123), answer(2, "error", cost=0.001), answer(3, interrupted=True)]
    runs = agent_runs([child(i) for i in range(1, 5)], billed, busy=True, now_ms=61_000)
    assert [r.facts() for r in runs] == [
        "done · 12s · $0.0123 · 1 tool call",
        "failed · 12s · $0.0010 · 1 tool call",
        "interrupted · 12s · cost unknown · 1 tool call",  # no cost stored
        "running · 1m 00s · cost unknown",
    ]
    assert agent_runs([child(4)], [], busy=False, now_ms=61_000)[0].status == "interrupted"  # cut off
    long = "explore: TASK-B: List every place the code calls want_bytes and say w"  # as stored: 60 of the task
    assert shown_title(long, "explore") == "explore: TASK-B: List every place the code calls want_bytes and say…"
    assert shown_title("explore: short task", "explore") == "explore: short task"
