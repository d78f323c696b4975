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
        assert re.search(r"done · \d+s · \$0\.0000 · 2 tool calls · [0-9a-f]{8}", listing)
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
