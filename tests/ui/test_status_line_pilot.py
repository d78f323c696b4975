"""The status bar at 80×24 (issue 46 items 12, 13, 18): cost and context stay while a turn runs
or retries (the activity's words, the cache share and the effort go first), anything cut ends
with "…", an effort the model is not sent is marked so, and a model with no known price says
so instead of "$0.0000"."""

from __future__ import annotations

from rich.cells import cell_len

from agent.ui.app import CairnApp
from agent.ui.widgets.status import StatusBar
from tests.fakes.llm_script import hang, rate_limited
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, send, wait_for, wait_ready

SIZE = (80, 24)
PRICED = "openai/gpt-4o-mini"  # in litellm's price map: a cost shows
LONG_PROMPT = "please explain how the timestamp signer checks max_age in this project and why"


def line(app: CairnApp) -> str:
    """The status bar as drawn, at its width."""
    shown = app.status.shown().plain
    assert cell_len(shown) <= app.status.content_size.width, shown
    return shown


async def test_idle_working_and_retrying_keep_cost_and_context(make_settings, server):
    server.add(text("first answer"), hang(30, text="partial"), rate_limited(retry_after=30))
    app = CairnApp(make_settings(model=PRICED))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, LONG_PROMPT)
        idle = line(app)
        assert "%)" in idle and "$0.0" in idle, idle
        assert idle.endswith("…") and "please explain" in idle, idle  # the title, cut with a mark

        await send(pilot, "what next")
        await wait_for(pilot, lambda: "Working" in line(app), what="the turn to run")
        working = line(app)
        assert "%)" in working and "$0.0" in working and "esc" in working, working
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")

        await send(pilot, "again")
        await wait_for(pilot, lambda: "Retry" in line(app), what="the retry countdown")
        retrying = line(app)
        assert "(attempt 1/" in retrying and "%)" in retrying and "$0.0" in retrying, retrying
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the cancel")


def test_a_line_too_narrow_for_anything_is_cut_with_an_ellipsis():
    bar = StatusBar(model="openrouter/some-provider/a-very-long-model-name-indeed")
    bar.context_tokens, bar.context_window, bar.cost = 6100, 128_000, 0.0123  # as set_usage (needs an app)
    shown = bar.render_text(30).plain
    assert cell_len(shown) == 30 and shown.endswith("…"), shown
    assert "new session" in bar.render_text().plain  # whole when no width is given


def test_an_effort_not_sent_is_marked_and_an_unpriced_model_says_so():
    bar = StatusBar(model="openai/fake")
    bar.effort, bar.effort_sent, bar.priced = "high", False, False  # as set_info (needs an app)
    assert " · effort high (not sent)" in bar.render_text(120).plain
    assert "price unknown" in bar.render_text(120).plain and "$0.0000" not in bar.render_text(120).plain
    bar.effort_sent, bar.priced = True, True
    whole = bar.render_text(120).plain
    assert " · effort high ·" in whole and "$0.0000" in whole


async def test_effort_on_a_model_that_does_not_reason_is_shown_as_not_sent(make_settings, server):
    app = CairnApp(make_settings())  # openai/fake: not in the price map
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/effort high")
        assert "effort high (not sent)" in line(app)
        assert "price unknown" in line(app)


async def test_a_model_declared_reasoning_is_sent_the_effort(make_settings, server):
    """`[models."…"] supports_reasoning = true`: a local reasoning model the price map does
    not list gets the effort (`reasoning_effort` on the OpenAI-compatible wire)."""
    server.add(text("one"), text("two"))
    declared = CairnApp(make_settings(models={"openai/fake": {"supports_reasoning": True}}))
    async with declared.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/effort high")
        assert " · effort high ·" in declared.status.render_text().plain
        await run_prompt(pilot, "think")
        assert server.requests[-1]["reasoning_effort"] == "high"
    plain = CairnApp(make_settings())
    async with plain.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/effort high")
        await run_prompt(pilot, "think")
        assert "reasoning_effort" not in server.requests[-1]
