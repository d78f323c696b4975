"""Issue 18 gap: a command's output streams live into its block while it runs, and what it
printed before an interrupt is kept: on screen, and stored as the call's result (the model
sees it next turn). Real terminal tool, real loop, scripted server."""

from __future__ import annotations

from agent.ui.app import CairnApp
from tests.fakes.llm_server import tool_calls
from tests.ui.conftest import send, wait_for, wait_ready

SIZE = (100, 30)
COMMAND = "for i in 1 2 3; do echo live-$i; done; echo to-stderr >&2; sleep 120"


def running_text(block) -> str:
    found = block.query(".tool-running")
    return str(found.first().content) if found else ""


async def test_output_streams_live_and_is_kept_on_interrupt(make_settings, server):
    server.add(tool_calls([("c1", "terminal-execute", {"command": COMMAND})]))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "run the slow thing")
        await wait_for(pilot, lambda: app.chat.tool_blocks, 90, "the tool block")
        block = app.chat.tool_blocks[0]
        await wait_for(
            pilot,
            lambda: "live-3" in running_text(block) and "to-stderr" in running_text(block),
            60,
            "the output while the command runs",
        )
        assert "running…" in running_text(block) and block.result is None

        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, 60, "the interrupt")
        await app.workers.wait_for_complete()
        stored = next(m for m in await app.runtime.history() if m.role == "tool")
        assert stored.status == "error" and "interrupted" in stored.content
        assert "live-1" in stored.content and "live-3" in stored.content
        assert "live-3" in str(block.result.content)  # what the block shows now
