"""The model is told the permission mode: a user message sent in another mode than the previous
one carries a reminder (agent/tools/modes.py) in its meta, rendered after its text in every
request (agent/context/rendered.py `api_form`), never in the system prompt (the cached prefix)."""

from __future__ import annotations

from agent.context.rendered import Rendered, api_form
from agent.context.tokens import TokenCounter
from agent.runtime.ops import Prompt, SetMode
from agent.session.models import Message
from agent.tools.modes import REMINDER_META, REMINDERS
from agent.turn.events import ModeChanged
from tests.fakes.llm_server import text


def test_the_reminder_follows_the_user_text_and_nothing_else_changes():
    plain = Message(role="user", content="hi")
    reminded = Message(role="user", content="hi", meta={REMINDER_META: REMINDERS["plan"]})
    assert api_form(plain) == plain.to_api() == {"role": "user", "content": "hi"}
    assert api_form(reminded) == {"role": "user", "content": f"hi\n\n{REMINDERS['plan']}"}
    assert Rendered(reminded).api == api_form(reminded)
    assert api_form(Message(role="user", content="", meta={REMINDER_META: "x"}))["content"] == "x"
    # only a user message renders it
    other = Message(role="assistant", content="ok", meta={REMINDER_META: "x"})
    assert api_form(other) == other.to_api()
    counter = TokenCounter()
    assert counter.count_stored(reminded) > counter.count_stored(plain)


async def test_the_request_after_a_switch_carries_the_reminder_once(open_runtime, server):
    server.add(text("one"), text("two"), text("three"), text("four"))
    runtime = await open_runtime(yolo=False)
    try:
        await runtime.submit(Prompt("first"))
        runtime.submit(SetMode("plan"))
        assert runtime.mode == "plan" and ModeChanged(mode="plan") in runtime.events
        await runtime.submit(Prompt("second"))
        await runtime.submit(Prompt("third"))
        runtime.submit(SetMode("default"))
        await runtime.submit(Prompt("fourth"))
    finally:
        await runtime.close()
    users = [[m["content"] for m in r["messages"] if m["role"] == "user"] for r in server.requests]
    assert users[0] == ["first"]
    assert users[1] == ["first", f"second\n\n{REMINDERS['plan']}"]
    assert users[2][-1] == "third"  # still plan mode: nothing new to say
    assert users[3][1:] == [f"second\n\n{REMINDERS['plan']}", "third", f"fourth\n\n{REMINDERS['default']}"]
    # the system prompt (the cached prefix) is the same in every request
    assert len({r["messages"][0]["content"] for r in server.requests}) == 1


async def test_a_session_started_in_plan_mode_says_so_at_once(open_runtime, server):
    server.add(text("ok"))
    runtime = await open_runtime(yolo=False, flags={"permission_mode": "plan"})
    try:
        assert runtime.mode == "plan"
        await runtime.submit(Prompt("look around"))
    finally:
        await runtime.close()
    assert server.requests[0]["messages"][-1]["content"] == f"look around\n\n{REMINDERS['plan']}"
