"""A diff taller than the approval modal at 80×24 scrolls with the keys a reader tries first
(issue 32, item 1): PageDown/PageUp, Down/Up from the first choice, Home/End; a hint says
how much is hidden and how to see it. The answer keys still answer."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.screens.approval import ApprovalScreen
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

SEVENTEEN_LINES = "".join(f"line {i} of the new file\\n" for i in range(17))


def hint(app) -> str:
    shown = app.screen.query("#approval-hint")
    return shown.first().render().plain if shown and shown.first().display else ""


async def open_long_approval(pilot, server) -> ApprovalScreen:
    server.add(
        tool_calls([("c1", "filesystem-create", f'{{"filePath": "new.py", "content": "{SEVENTEEN_LINES}"}}')]),
        text("Done."),
    )
    app = pilot.app
    await wait_ready(pilot)
    await send(pilot, "write it")
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the approval modal")
    scroll = app.screen.query_one("#approval-scroll")
    await wait_for(pilot, lambda: scroll.max_scroll_y > 0 and "more lines" in hint(app), what="the scroll hint")
    return app.screen


async def test_page_down_and_down_scroll_a_long_diff_and_a_hint_says_so(make_settings, server, workspace):
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_long_approval(pilot, server)
        scroll = screen.query_one("#approval-scroll")
        await wait_for(
            pilot,
            lambda: hint(app) == f"↓ {scroll.max_scroll_y} more lines · PgDn/↓ to scroll",
            what="the hint to count the lines hidden once the modal is fitted",
        )
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: scroll.scroll_y > 0, what="PageDown to scroll the diff")
        await pilot.press("home")
        await wait_for(pilot, lambda: scroll.scroll_y == 0, what="Home to go back to the top")
        await pilot.press("down")
        await wait_for(pilot, lambda: scroll.scroll_y == 1, what="Down to scroll one line")
        assert screen.query_one("#approval-choices").highlighted == 0  # the choice did not move
        await pilot.press("end")
        await wait_for(pilot, lambda: scroll.scroll_y == scroll.max_scroll_y, what="End")
        await wait_for(pilot, lambda: "above" in hint(app), what="the hint at the end")
        await pilot.press("down")  # the diff ends: Down moves through the choices again
        await wait_for(pilot, lambda: screen.query_one("#approval-choices").highlighted == 1, what="the next choice")
        await pilot.press("n")  # the answer keys still answer
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
        assert not (workspace / "new.py").exists()


async def test_a_diff_that_fits_has_no_hint_and_down_moves_the_choice(make_settings, server):
    server.add(tool_calls([("c1", "terminal-execute", '{"command": "touch x"}')]), text("No."))
    app = CairnApp(make_settings())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "touch")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the approval modal")
        await pilot.pause()
        assert hint(app) == ""
        await pilot.press("down")
        await wait_for(pilot, lambda: app.screen.query_one("#approval-choices").highlighted == 1, what="Down")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
