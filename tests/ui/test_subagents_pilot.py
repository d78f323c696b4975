"""Subagents in the TUI: the call's block shows the agent and what it cost, its live lines
show what the child does, and `/agents N` opens the child's transcript, read-only."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.screens.transcript import TranscriptScreen
from tests.fakes.llm_server import text, tool_calls
from tests.subagents.test_subagent_e2e import _in
from tests.ui.conftest import chat_text, run_prompt, wait_for, wait_ready

SIZE = (80, 24)
PROMPT = "who defines VERSION?"
TASK = "Find where VERSION is defined"


async def test_agents_opens_the_childs_transcript(make_settings, server, workspace):
    (workspace / "version.py").write_text("VERSION = '1.2.3'\n")
    server.add(
        _in(PROMPT, tool_calls([("s1", "subagent", {"agent": "explore", "task": TASK})])),
        _in(TASK, tool_calls([("r1", "filesystem-read", {"filePath": "version.py"})])),
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
        assert block.summary.startswith("1 tool call · ")  # what the child did, on the collapsed result

        await run_prompt(pilot, "/agents")
        listing = " ".join(chat_text(app).split())
        assert "1. explore: Find where VERSION is defined" in listing
        assert "explore: Read-only research" in listing  # and the agents the model can call

        await run_prompt(pilot, "/agents 1")
        await wait_for(pilot, lambda: isinstance(app.screen, TranscriptScreen), what="the transcript")
        body = app.screen.query_one("#transcript-body").source
        assert TASK in body and "version.py" in body and "VERSION is defined in version.py line 1." in body
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TranscriptScreen), what="the transcript to close")
