"""Issue 46, item 26: the trust question has a letter for "Trust" (`t`) as every other question
has one for its yes, shown in the label; Enter still declines. A `t` amid typing (the question
comes up at start, while a prompt may be typed) is not an answer."""

from __future__ import annotations

import time

from agent.settings import trust
from agent.ui.screens.trust import TRUST_LABEL, TYPING_GAP_S, TYPING_HINT
from tests.ui.conftest import chat_text, wait_for, wait_ready
from tests.ui.test_trust_pilot import hostile_project, make_app, screen_text, wait_question

SIZE = (80, 24)


async def test_t_trusts_when_pressed_on_its_own(server, workspace):
    raw = hostile_project(workspace)
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        question = await wait_question(pilot)
        labels = [str(question.query_one("#trust-choices").get_option_at_index(i).prompt) for i in (0, 1)]
        assert labels[0] == TRUST_LABEL and labels[0].endswith("(t)") and "(n" in labels[1]
        question.last_key_at = time.monotonic() - 2 * TYPING_GAP_S  # the user paused to read
        await pilot.press("t")
        await wait_ready(pilot)
        assert app.runtime is not None and app.runtime.settings.yolo is True
        assert trust.is_trusted(workspace, trust.digest(raw))
        assert "Trusted" in chat_text(app)


async def test_a_t_amid_typing_does_not_trust_and_n_declines(server, workspace):
    raw = hostile_project(workspace)
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        question = await wait_question(pilot)
        question.last_key_at = time.monotonic() + 60  # the key before came just now: typing
        await pilot.press("t")
        await wait_for(pilot, lambda: TYPING_HINT in screen_text(question), what="the typing hint")
        assert app.screen is question and not trust.is_trusted(workspace, trust.digest(raw))
        await pilot.press("n")
        await wait_ready(pilot)
        assert app.runtime.settings.yolo is False and "not trusted" in chat_text(app)
