"""`cairn "fix the bug"`: the TUI starts with that prompt sent, as if typed and Enter pressed
(in the chat, in the prompt history, the first request's user message); what was typed on
the first screen meanwhile follows it."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.early import TypeAhead
from agent.ui.widgets.chat import UserMessage
from tests.fakes.llm_server import text
from tests.ui.conftest import READY_TIMEOUT, wait_for

SIZE = (80, 24)


def _user_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


async def test_the_initial_prompt_is_sent_and_shown(make_settings, server):
    server.add(text("fixed it"))
    app = CairnApp(make_settings(), initial_prompt="fix the bug")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: app.chat.assistant_messages and not app.turn_running,
            timeout=READY_TIMEOUT,
            what="the answer",
        )
        assert _user_texts(server.requests[0]) == ["fix the bug"]
        assert [m.text for m in app.chat.query(UserMessage)] == ["fix the bug"]
        assert app.chat.assistant_messages[-1].text == "fixed it"
        assert app.prompt.text == ""
        assert app.prompt.prompt_history is not None
        assert app.prompt.prompt_history.entries()[-1] == "fix the bug"  # Up brings it back


async def test_type_ahead_follows_the_initial_prompt(make_settings, server):
    """Both were sent before the runtime opened: one turn, the initial prompt first (as two
    prompts typed while cairn starts are sent)."""
    server.add(text("both done"))
    app = CairnApp(make_settings(), initial_prompt="fix the bug")
    app.typeahead = TypeAhead("then run the tests", submitted=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: app.chat.assistant_messages and not app.turn_running,
            timeout=READY_TIMEOUT,
            what="the answer",
        )
        assert [m.text for m in app.chat.query(UserMessage)] == ["fix the bug", "then run the tests"]
        assert _user_texts(server.requests[0]) == ["fix the bug\n\nthen run the tests"]
