"""Sessions without a message (issue 28, item 5): a launch quit at once leaves none behind,
and `--continue` and `cairn session list` pass over one a killed launch left."""

from __future__ import annotations

import json

import pytest

from agent.runtime.ops import NewSession, OpenSession, Prompt
from agent.session.models import Message
from agent.session.store import Store
from tests.fakes.llm_server import FakeLLMServer, text
from tests.headless.helpers import CAIRN, base_args, cairn

needs_cairn = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")


async def _sessions() -> list:
    store = await Store.open()
    try:
        return await store.list_summaries()
    finally:
        await store.close()


async def _leave_an_empty_session(cwd: str) -> str:
    """What a launch killed before its first prompt leaves: a session row, no message."""
    store = await Store.open()
    try:
        return (await store.create_session(cwd=cwd, model="openai/fake-model")).id
    finally:
        await store.close()


async def test_a_launch_quit_at_once_keeps_no_session(open_runtime):
    runtime = await open_runtime()
    await runtime.close()
    assert await _sessions() == []


async def test_a_session_with_a_message_is_kept(server, open_runtime):
    server.add(text("hi"))
    runtime = await open_runtime()
    await runtime.submit(Prompt("hello"))
    await runtime.close()
    (summary,) = await _sessions()
    assert summary.session.id == runtime.session.id and summary.message_count == 2


async def test_leaving_an_empty_session_removes_it(server, open_runtime):
    """/new, the picker or a fork from a session nothing was asked in: that one goes."""
    server.add(text("hi"))
    runtime = await open_runtime()
    first = runtime.session.id
    await runtime.submit(Prompt("hello"))
    empty = (await runtime.submit(NewSession())).id
    await runtime.submit(OpenSession(first))  # back to the first: the empty one is gone
    assert [s.session.id for s in await runtime.list_sessions()] == [first]
    await runtime.submit(NewSession())
    await runtime.submit(NewSession())  # /new twice: the one in between is gone as well
    assert {s.session.id for s in await runtime.list_sessions()} == {first, runtime.session.id}
    await runtime.close()
    assert [s.session.id for s in await _sessions()] == [first]
    assert empty != first


async def test_an_empty_session_is_not_removed_once_it_has_a_message(store):
    session = await store.create_session(cwd="/a")
    await store.append(session, Message(role="user", content="first"))
    assert not await store.prune_if_empty(session.id)
    assert (await store.get_session(session.id)) is not None
    empty = await store.create_session(cwd="/a")
    assert await store.prune_if_empty(empty.id)
    assert await store.get_session(empty.id) is None
    assert not await store.prune_if_empty(empty.id)  # already gone


async def test_store_queries_can_skip_empty_sessions(store):
    full = await store.create_session(cwd="/a")
    await store.append(full, Message(role="user", content="question"))
    empty = await store.create_session(cwd="/a")  # written later: the newest
    assert (await store.latest_session("/a")).id == empty.id
    assert (await store.latest_session("/a", with_messages=True)).id == full.id
    assert await store.latest_session("/b", with_messages=True) is None
    assert [s.session.id for s in await store.list_summaries(with_messages=True)] == [full.id]
    assert [s.session.id for s in await store.list_summaries(cwd="/a", with_messages=True)] == [full.id]


@needs_cairn
async def test_continue_and_session_list_pass_over_an_empty_session(workspace):
    with FakeLLMServer([text("The first answer."), text("The second answer.")]) as srv:
        args = base_args(srv, workspace)
        out = cairn(*args, "-p", "first question")
        assert out.returncode == 0, out.stderr
        (first,) = json.loads(cairn("session", "list", "--json").stdout)

        empty = await _leave_an_empty_session(str(workspace))

        listed = cairn("session", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [s["id"] for s in json.loads(listed.stdout)] == [first["id"]]
        assert empty not in cairn("session", "list").stdout

        out = cairn(*args, "--continue", "-p", "second question")
        assert out.returncode == 0, out.stderr
        assert out.stdout == "The second answer.\n"
        second = srv.requests[-1]["messages"]
    assert [m["content"] for m in second if m["role"] == "user"] == ["first question", "second question"]
    # Continued, not a new session: still one with messages, the empty one still not listed.
    (after,) = json.loads(cairn("session", "list", "--json").stdout)
    assert after["id"] == first["id"] and after["message_count"] == 4
