"""Seed 002: assistant messages with unmatched tool calls are left out when a session loads."""

from __future__ import annotations

import copy
import logging

from agent.runtime.ops import Prompt
from agent.session.loading import drop_unmatched_tool_calls, load_session_messages
from agent.session.models import Message, ToolCall
from agent.session.store import Store
from tests.fakes.llm_server import text


def user(text="u"):
    return Message(role="user", content=text)


def assistant(*ids, text=None):
    return Message(role="assistant", content=text, tool_calls=[ToolCall(id=i, name="read") for i in ids])


def result(i):
    return Message(role="tool", tool_call_id=i, content="ok")


def test_empty_list():
    assert drop_unmatched_tool_calls([]) == []


def test_no_tool_calls_unchanged():
    history = [user(), Message(role="assistant", content="hi")]
    assert drop_unmatched_tool_calls(history) == history


def test_all_matched_unchanged():
    history = [user(), assistant("a", "b"), result("a"), result("b")]
    assert drop_unmatched_tool_calls(history) == history


def test_seed_data_flow_example_crash_after_second_call():
    """The seed's example: toolu_002 has no result, so message 4 is removed."""
    m1, m2, m3, m4 = user("read file.ts"), assistant("toolu_001"), result("toolu_001"), assistant("toolu_002")
    assert drop_unmatched_tool_calls([m1, m2, m3, m4]) == [m1, m2, m3]


def test_one_of_several_calls_unmatched_drops_whole_message():
    m = assistant("a", "b")
    out = drop_unmatched_tool_calls([user(), m, result("a")])
    assert m not in out and [x.role for x in out] == ["user", "tool"]


def test_text_and_unmatched_call_drops_text_too():
    m = assistant("a", text="Let me look at the file first.")
    out = drop_unmatched_tool_calls([user(), m, user("again")])
    assert m not in out and len(out) == 2


def test_input_not_mutated_and_debug_logged(caplog):
    history = [user(), assistant("toolu_002", "toolu_003")]
    before = copy.deepcopy([m.model_dump() for m in history])
    with caplog.at_level(logging.DEBUG, logger="agent.session"):
        drop_unmatched_tool_calls(history)
    assert [m.model_dump() for m in history] == before
    assert "Found 2 unmatched tool call(s): toolu_002, toolu_003" in caplog.text
    assert f"Leaving out assistant message {history[1].id}" in caplog.text


async def test_resume_after_a_crash_mid_tool_call(tmp_path, server, open_runtime):
    """A kill between the call and its result: resume works, storage keeps every row."""
    store = await Store.open()
    session = await store.create_session(cwd=str(open_runtime.workspace), model="openai/fake-model")
    first = await store.append(session, user("read file.ts"))
    crashed = await store.append(session, assistant("toolu_009", text="Reading it now."))
    assert [m.id for m in await load_session_messages(store, session.id)] == [first.id]
    await store.close()

    server.add(text("back again"))
    runtime = await open_runtime(resume_id=session.id)
    try:
        shown = await runtime.history()
        await runtime.submit(Prompt("continue"))
        stored = await runtime.store.all_messages(session.id)
    finally:
        await runtime.close()
    assert crashed.id not in [m.id for m in shown]
    sent = server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert crashed.id in [m.id for m in stored]  # nothing deleted
