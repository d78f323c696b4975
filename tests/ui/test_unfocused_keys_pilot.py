"""Keys that reach the app before its prompt has focus (issue 32, item 16).

The first screen hands over to the app, which focuses its prompt a moment after it is
mounted (Textual focuses on a later callback). An Enter arriving in between went to the
screen, where nothing takes it: the prompt typed on the first screen stayed unsent, about
one launch in eight under load. Here the moment is made to last: nothing is focused.
"""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.early import TypeAhead
from agent.ui.widgets.chat import UserMessage
from tests.fakes.llm_server import text
from tests.ui.conftest import READY_TIMEOUT, wait_for, wait_ready

SIZE = (80, 24)


async def test_an_enter_before_the_prompt_has_focus_sends_what_was_typed(make_settings, server):
    server.add(text("got it"))
    app = CairnApp(make_settings())
    app.typeahead = TypeAhead("typed on the first screen", submitted=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.set_focus(None)  # the moment before the prompt is focused
        await pilot.pause()
        assert app.focused is None
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.assistant_messages and not app.turn_running, READY_TIMEOUT, "the answer")
        assert [u.text for u in app.chat.query(UserMessage)] == ["typed on the first screen"]
        assert app.focused is app.prompt


async def test_text_typed_before_the_prompt_has_focus_lands_in_it(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.set_focus(None)
        await pilot.pause()
        await pilot.press("h", "i")
        await pilot.pause()
        assert app.prompt.text == "hi" and app.focused is app.prompt
