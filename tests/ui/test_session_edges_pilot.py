"""Session edges: a rewind keeps the user's draft recoverable, an unknown `--resume` id ends
cairn with a message, quitting says how to resume."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.screens.rewind import RewindScreen
from agent.ui.widgets.chat import Notice
from tests.fakes.llm_server import text
from tests.ui.conftest import READY_TIMEOUT, run_prompt, wait_for, wait_ready

SIZE = (100, 30)


async def test_rewind_over_a_draft_says_so_and_ctrl_z_brings_it_back(make_settings, server):
    server.add(text("An answer."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "the first prompt", READY_TIMEOUT)
        app.prompt.insert("a draft I care about")
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RewindScreen), what="the rewind menu")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.prompt.text == "the first prompt", what="the rewound prompt")
        await wait_for(pilot, lambda: any("Ctrl+Z" in n.text for n in app.chat.query(Notice)), what="the notice")
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.prompt.text == "a draft I care about"


async def test_resume_of_an_unknown_id_exits_non_zero_with_the_message(make_settings):
    app = CairnApp(make_settings(), resume_id="no-such-session")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app._exit, READY_TIMEOUT, "the app to exit")
        message = str(app._exit_renderables[0])
    assert app.return_code == 1
    assert "No session matches 'no-such-session'" in message


async def test_quitting_prints_how_to_resume(make_settings, server):
    server.add(text("Hi."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hello", READY_TIMEOUT)
        session_id = app.runtime.session.id
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app._exit, what="the app to exit")
        hint = str(app._exit_renderables[0])
    assert hint == f"Resume this session with: cairn --resume {session_id}" and not app.return_code
