"""Issue 46, items 2, 9 and 17 at 80×24: the plan review scrolls as the approval diff does
(PgDn, ↓, End, the same hint), a habitual Enter does not approve a plan not read to its end,
the review is docked under the chat (the model's words above it stay in view), and what the
user types after `n` shows in the chat as theirs."""

from __future__ import annotations

import json

from agent.ui.app import CairnApp
from agent.ui.screens.plan_review import PlanReviewScreen
from agent.ui.widgets.chat import AssistantMessage
from agent.ui.widgets.user_message import UserMessage
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

PLAN = "## Plan\n\n" + "\n".join(f"{n}. Step {n}: change `module_{n}.py`" for n in range(1, 36))
EXPLANATION = "EXPLAINED: I read signer.py and here is my plan."


def hint(app) -> str:
    shown = app.screen.query("#plan-hint")
    return shown.first().render().plain if shown and shown.first().display else ""


async def open_review(pilot, server) -> PlanReviewScreen:
    server.add(
        tool_calls([("c1", "exit-plan-mode", json.dumps({"plan": PLAN}))], text=EXPLANATION),
        text("Revising."),
    )
    app = pilot.app
    await wait_ready(pilot)
    app.chat.add_notice("\n".join(f"earlier line {i}" for i in range(16)))  # the chat is full
    await send(pilot, "plan it")
    await wait_for(pilot, lambda: isinstance(app.screen, PlanReviewScreen), READY_TIMEOUT, "the plan review")
    scroll = app.screen.query_one("#plan-scroll")
    await wait_for(pilot, lambda: scroll.max_scroll_y > 0 and "more lines" in hint(app), what="the scroll hint")
    return app.screen


async def test_pagedown_down_and_end_scroll_the_plan_with_the_approval_hint(make_settings, server):
    app = CairnApp(make_settings(permission_mode="plan"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot, server)
        scroll = screen.query_one("#plan-scroll")
        choices = screen.query_one("#plan-choices")
        await wait_for(
            pilot,
            lambda: hint(app) == f"↓ {round(scroll.max_scroll_y)} more lines · PgDn/↓ to scroll",
            what="the approval's hint, counting the plan's hidden lines",
        )
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: scroll.scroll_y > 0, what="PageDown to scroll the plan")
        await pilot.press("home")
        await wait_for(pilot, lambda: scroll.scroll_y == 0, what="Home")
        await pilot.press("down")
        await wait_for(pilot, lambda: scroll.scroll_y == 1, what="Down to scroll one line")
        assert choices.highlighted == 1  # the highlighted default did not move
        await pilot.press("end")
        await wait_for(pilot, lambda: scroll.scroll_y == scroll.max_scroll_y, what="End")
        await wait_for(pilot, lambda: "above" in hint(app), what="the hint at the end")
        await pilot.press("n")
        await pilot.press(*"also bump the version", "enter")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
        said = [w.text for w in app.chat.query(UserMessage)]
        assert said[-1] == "also bump the version"  # the feedback, in the chat as the user's words
        await app.quit_app()
    again = CairnApp(make_settings(permission_mode="plan"), continue_last=True)
    async with again.run_test(size=(80, 24)) as pilot:  # and there again in the resumed history
        await wait_ready(pilot)
        await wait_for(pilot, lambda: again.chat.query(AssistantMessage), what="the resumed history")
        assert [w.text for w in again.chat.query(UserMessage)] == ["plan it", "also bump the version"]


async def test_enter_on_yes_reads_on_until_the_plan_was_shown_to_its_end(make_settings, server):
    app = CairnApp(make_settings(permission_mode="plan"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot, server)
        scroll = screen.query_one("#plan-scroll")
        pages = 0
        while scroll.scroll_y < scroll.max_scroll_y:
            before = scroll.scroll_y
            await pilot.press("enter")  # on "Yes, and ask before edits": a page, not an approval
            await wait_for(pilot, lambda before=before: scroll.scroll_y > before, what="Enter to read on")
            assert app.screen is screen
            pages += 1
        assert pages >= 1
        await pilot.press("enter")  # read to the end: now Enter approves
        await wait_for(pilot, lambda: app.screen is not screen, what="the approval")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
        assert app.runtime.mode == "default"


async def test_the_review_is_docked_under_the_chat_whose_last_words_stay_in_view(make_settings, server):
    app = CairnApp(make_settings(permission_mode="plan"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_review(pilot, server)
        box = screen.query_one("#plan-box")
        await wait_for(pilot, lambda: box.region.bottom == 24 and box.region.width == 80, what="a bottom panel")
        assert box.region.y >= 6  # the chat keeps rows above the panel
        [said] = [w for w in app.chat.query(AssistantMessage) if EXPLANATION in w.text]
        await wait_for(
            pilot,
            lambda: said.region.height > 0 and said.region.y >= 0 and said.region.bottom <= box.region.y,
            what="the model's explanation above the panel, in view",
        )
        await wait_for(pilot, lambda: app.chat.region.bottom <= box.region.y, what="the chat ending above the panel")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
        assert app.chat.styles.margin.bottom == 0  # the chat's room is given back
