"""What was typed on the first screen (agent/ui/early.py) reaches the app's prompt, or is sent."""

from __future__ import annotations

from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.early import TypeAhead
from agent.ui.widgets.chat import UserMessage
from tests.fakes.llm_server import text
from tests.ui.conftest import READY_TIMEOUT, wait_for, wait_ready

SIZE = (120, 36)


async def test_typed_text_waits_in_the_prompt(make_settings):
    app = CairnApp(make_settings())
    app.typeahead = TypeAhead("half a thought", submitted=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.prompt.text == "half a thought"
        assert app.prompt.cursor_location == app.prompt.document.end  # typing continues it
        await pilot.press("!")
        assert app.prompt.text == "half a thought!"
        assert not app.chat.query(UserMessage)


async def test_enter_on_the_first_screen_sends_once_the_app_can(make_settings, server):
    server.add(text("answered the early prompt"))
    app = CairnApp(make_settings())
    app.typeahead = TypeAhead("sent before the app ran", submitted=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: app.chat.assistant_messages and not app.turn_running,
            timeout=READY_TIMEOUT,
            what="the answer",
        )
        assert app.chat.assistant_messages[-1].text == "answered the early prompt"
        assert [m["content"] for m in server.requests[0]["messages"] if m["role"] == "user"] == [
            "sent before the app ran"
        ]
        assert app.prompt.text == ""


async def test_a_prompt_that_cannot_be_sent_goes_back_into_the_prompt(workspace):
    app = CairnApp(load_settings(workspace))  # no model configured
    app.typeahead = TypeAhead("do not lose me", submitted=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: app.no_model, what="the no-model panel")
        assert app.prompt.text == "do not lose me"
