"""A resumed session shows `Interrupted` where its turn was cut short (issue 32, item 10),
as the live chat did: the stored partial answer keeps the mark in its status."""

from __future__ import annotations

from agent.session.models import Message
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from agent.ui.widgets.history_marks import interrupted_turn_ends
from tests.fakes.llm_server import hang, text
from tests.ui.conftest import READY_TIMEOUT, run_prompt, send, wait_for, wait_ready

SIZE = (80, 24)


def shown_in_order(app) -> list[str]:
    return [f"{type(w).__name__}:{getattr(w, 'text', '')}" for w in app.chat.children if w.display]


async def test_the_interrupted_mark_comes_back_on_resume(make_settings, server):
    server.add(text("first answer"), hang(60, text="half an ans"))
    first = CairnApp(make_settings())
    async with first.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "one")
        await send(pilot, "two")
        await wait_for(
            pilot,
            lambda: first.chat.assistant_messages and first.chat.assistant_messages[-1].text == "half an ans",
            READY_TIMEOUT,
            "the partial answer",
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: not first.turn_running, what="the interrupt")
        live = shown_in_order(first)
        await first.quit_app()
    assert live[-1] == "Notice:Interrupted"

    again = CairnApp(make_settings(), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: again.chat.query(Notice), what="the history")
        resumed = shown_in_order(again)
    assert resumed[-2:] == ["AssistantMessage:half an ans", "Notice:Interrupted"]
    assert resumed.count("Notice:Interrupted") == 1  # the first turn ended on its own


def test_only_turns_holding_an_interrupted_message_are_marked():
    messages = [
        Message(id="u1", role="user", content="a"),
        Message(id="a1", role="assistant", content="cut", status="interrupted"),
        Message(id="n1", role="user", kind="note", content="!ls"),
        Message(id="u2", role="user", content="b"),
        Message(id="a2", role="assistant", content="fine"),
    ]
    assert interrupted_turn_ends(messages) == {"n1"}
    assert interrupted_turn_ends(messages[:2]) == {"a1"}
    assert interrupted_turn_ends(messages[3:]) == set()
