"""The token meter at rest agrees with /context: after a turn, a rewind, a resume."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.screens.rewind import RewindScreen
from tests.fakes.llm_server import text
from tests.ui.conftest import READY_TIMEOUT, run_prompt, wait_for, wait_ready

SIZE = (100, 30)


async def next_request_tokens(app) -> int:
    return (await app.runtime.context_report())["tokens"]["total"]


async def meter_agrees(pilot, what: str) -> int:
    app = pilot.app
    await wait_for(
        pilot,
        lambda: not any(w.group == "meter" and not w.is_finished for w in app.workers),
        READY_TIMEOUT,
        "the meter's measurement",
    )
    expected = await next_request_tokens(app)
    await wait_for(pilot, lambda: app.status.context_tokens == expected, READY_TIMEOUT, f"the meter {what}")
    assert f"{app.status.context_tokens}" and app.status.context_window
    return expected


async def test_meter_matches_context_after_turn_rewind_and_resume(make_settings, server):
    server.add(text("The first answer, a little long. " * 20), text("The second answer. " * 30))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "first question", READY_TIMEOUT)
        await run_prompt(pilot, "second question " * 20)
        after_turns = await meter_agrees(pilot, "after the turns")
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen), what="the rewind menu")
        await pilot.press("enter")  # the newest turn: back to before "second question"
        await wait_for(pilot, lambda: app.prompt.text.startswith("second question"), what="the rewind")
        rewound = await meter_agrees(pilot, "after the rewind")
        assert 0 < rewound < after_turns
        await app.quit_app()

    again = CairnApp(make_settings(), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert await meter_agrees(pilot, "after resuming") == rewound
