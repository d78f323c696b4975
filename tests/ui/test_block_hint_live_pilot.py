"""A tool result that came during a turn names its key (issue 46, item 1): the chat's hints
follow blocks that fold only once their result arrives, dialogs coming and going meanwhile."""

from __future__ import annotations

from agent.ui.app import CairnApp
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, run_prompt, wait_for, wait_ready

SIZE = (80, 24)
COMMAND = '{"command": "seq -f \\"row-%g\\" 1 40"}'


async def test_a_result_that_arrives_live_gets_its_hint(make_settings, server):
    for _ in range(3):
        server.add(tool_calls([("c1", "terminal-execute", COMMAND)]), text("Counted. FIRST-DONE"))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        for round_ in range(3):
            await run_prompt(pilot, f"count {round_}", READY_TIMEOUT)
            block = app.chat.tool_blocks[-1]
            title = block.query_one("CollapsibleTitle")
            await wait_for(
                pilot,
                lambda title=title: str(title.render()).endswith("Ctrl+O to expand"),
                what=f"the newest block's hint ({str(title.render())!r})",
            )


async def test_hints_asked_for_under_a_closed_dialog_still_come(tmp_path):
    """Textual runs an after-refresh callback on the screen current when it was asked: the
    chat asked while an approval was up, the approval closed before its next refresh, the
    callback went with it, and no hint in the chat changed again. That race showed in tmux
    (tests/e2e/test_tmux_keyboard.py failed 1 run in 3-5); here Textual does not always drop
    the callback, so this guards the shape (ask, close, ask again) rather than the race."""
    from textual.screen import ModalScreen

    from tests.ui.test_snapshots import call, command_result, make_app, settle

    app = make_app(tmp_path)
    run = call("c1", "terminal-execute", {"command": "seq 40"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        block = app.chat.tool_started(run)
        await settle(pilot)
        app.push_screen(ModalScreen())
        await pilot.pause()
        block.set_result(command_result("c1", run.arguments, "\n".join(map(str, range(40))), "", 0))
        app.chat.selection.schedule()  # asked while the dialog is current...
        app.pop_screen()  # ...which closes before it refreshes
        await pilot.pause()
        app.chat.add_notice("the turn goes on")  # the next thing shown asks again
        title = block.query_one("CollapsibleTitle")
        await wait_for(pilot, lambda: str(title.render()).endswith("Ctrl+O to expand"), what="the block's hint")
