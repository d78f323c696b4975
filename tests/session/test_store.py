"""The session store: a real SQLite file, WAL, migrations, a tree of messages."""

from __future__ import annotations

import sqlite3

from agent.session.models import Message, ToolCall
from agent.session.schema import MIGRATIONS
from agent.session.store import Store


async def test_wal_and_schema_version(store, tmp_path):
    assert await store.schema_version() == len(MIGRATIONS)
    conn = sqlite3.connect(tmp_path / "sessions.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_reopen_does_not_migrate_twice(tmp_path):
    first = await Store.open(tmp_path / "db.sqlite")
    await first.close()
    second = await Store.open(tmp_path / "db.sqlite")
    async with second.conn.execute("SELECT COUNT(*) FROM schema_version") as cur:
        assert (await cur.fetchone())[0] == len(MIGRATIONS)
    await second.close()


async def test_messages_chain_by_parent_and_head_moves(store):
    session = await store.create_session(cwd="/w", model="m")
    a = await store.append(session, Message(role="user", content="hi"))
    b = await store.append(
        session, Message(role="assistant", content="hello", tool_calls=[ToolCall(id="c1", name="x", arguments="{}")])
    )
    c = await store.append(session, Message(role="tool", tool_call_id="c1", tool_name="x", content="ok"))
    assert (a.parent_id, b.parent_id, c.parent_id) == (None, a.id, b.id)
    assert [a.seq, b.seq, c.seq] == [1, 2, 3]
    reloaded = await store.get_session(session.id)
    assert reloaded.head_id == c.id
    path = await store.active_path(session.id)
    assert [m.id for m in path] == [a.id, b.id, c.id]
    assert path[1].tool_calls[0].id == "c1"
    assert path[2].tool_call_id == "c1"


async def test_active_path_follows_head_not_other_branches(store):
    session = await store.create_session(cwd="/w")
    a = await store.append(session, Message(role="user", content="one"))
    b = await store.append(session, Message(role="assistant", content="two"))
    # A second branch from `a` (what rewind will do): the old branch stays stored.
    branch = await store.append(session, Message(role="assistant", content="other", parent_id=a.id))
    assert [m.id for m in await store.active_path(session.id)] == [a.id, branch.id]
    assert [m.id for m in await store.active_path(session.id, head_id=b.id)] == [a.id, b.id]
    assert len(await store.all_messages(session.id)) == 3


async def test_update_message_keeps_streamed_text_and_status(store):
    session = await store.create_session(cwd="/w")
    m = await store.append(session, Message(role="assistant", content="par", status="interrupted"))
    m.content = "partial answer"
    m.status = "ok"
    m.meta = {"cost": 0.01}
    await store.update_message(m)
    got = await store.get_message(m.id)
    assert (got.content, got.status, got.meta) == ("partial answer", "ok", {"cost": 0.01})


async def test_find_session_by_prefix_and_latest_by_folder(store):
    s1 = await store.create_session(cwd="/a")
    s2 = await store.create_session(cwd="/a")
    await store.create_session(cwd="/b")
    await store.append(s1, Message(role="user", content="later"))  # touches s1
    assert (await store.find_session(s2.id[:8])).id == s2.id
    assert (await store.latest_session("/a")).id == s1.id
    assert await store.find_session("zzzz") is None
    listed = await store.list_summaries()
    assert listed[0].session.id == s1.id and len(listed) == 3
    by_id = {s.session.id: (s.message_count, s.first_prompt) for s in listed}
    assert by_id[s1.id] == (1, "later") and by_id[s2.id] == (0, "")
    assert [s.session.cwd for s in await store.list_summaries(cwd="/b")] == ["/b"]


async def test_latest_on_a_millisecond_tie_is_the_session_written_last(store, frozen_clock):
    """Every write in one millisecond (a fast machine): `--continue`, the picker and
    `cairn session list` still put the session written last first, not the one created last."""
    from agent.session.models import Session

    s1 = await store.create_session(cwd="/a")
    s2 = await store.create_session(cwd="/a")
    await store.append(s1, Message(role="user", content="later"))  # touches s1
    assert {(await store.get_session(s.id)).updated_at for s in (s1, s2)} == {frozen_clock}  # a real tie
    assert (await store.latest_session("/a")).id == s1.id
    assert [s.session.id for s in await store.list_summaries(cwd="/a")] == [s1.id, s2.id]

    await store.update_session(s2, title="renamed")  # a rename is a write too
    assert (await store.latest_session("/a")).id == s2.id
    assert [s.session.id for s in await store.list_summaries()] == [s2.id, s1.id]
    await store.set_head(s1, None)  # so is moving the head (rewind)
    assert (await store.latest_session("/a")).id == s1.id

    fork = Session(cwd="/a")  # a fork or an import is written whole, and is written last
    await store.insert_session(fork, [Message(role="user", content="copied")])
    assert (await store.latest_session("/a")).id == fork.id
    older = Session(cwd="/a", created_at=frozen_clock - 5000, updated_at=frozen_clock - 5000)  # an old import
    await store.insert_session(older, [])
    assert [s.session.id for s in await store.list_summaries(cwd="/a")] == [fork.id, s1.id, s2.id, older.id]


async def test_touched_migration_keeps_the_order_sessions_had(tmp_path, frozen_clock):
    """A database from before `touched`: its sessions keep their order (a tie went to the
    later rowid), and the first write after the upgrade wins a tie against all of them."""
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version, script in enumerate(MIGRATIONS[:3], start=1):
        conn.executescript(script)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    for sid, updated in (("x", frozen_clock), ("y", frozen_clock), ("old", frozen_clock - 1000), ("z", frozen_clock)):
        conn.execute("INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES (?, '/a', 0, ?)", (sid, updated))
    conn.commit()
    conn.close()

    store = await Store.open(path)
    try:
        assert await store.schema_version() == len(MIGRATIONS)
        assert [s.session.id for s in await store.list_summaries()] == ["z", "y", "x", "old"]
        await store.append(await store.get_session("x"), Message(role="user", content="again"))
        assert (await store.latest_session("/a")).id == "x"
        assert [s.session.id for s in await store.list_summaries()] == ["x", "z", "y", "old"]
    finally:
        await store.close()


async def test_unicode_and_huge_content_round_trip(store):
    session = await store.create_session(cwd="/w")
    big = "数据🙂" * 1_000_000
    m = await store.append(session, Message(role="tool", tool_call_id="t", content=big))
    assert (await store.get_message(m.id)).content == big


async def test_active_path_limit_reads_only_the_newest(store):
    session = await store.create_session(cwd="/w")
    ids = [(await store.append(session, Message(role="user", content=str(i)))).id for i in range(10)]
    assert [m.id for m in await store.active_path(session.id, limit=3)] == ids[-3:]
    assert [m.id for m in await store.active_path(session.id, limit=50)] == ids


async def test_mark_condensed_and_context_events(store):
    from agent.session.models import ContextEvent

    session = await store.create_session(cwd="/w")
    first = await store.append(session, Message(role="user", content="a", meta={"keep": 1}))
    second = await store.append(session, Message(role="assistant", content="b"))
    summary = await store.append(session, Message(role="user", kind="summary", content="sum"))
    await store.mark_condensed([first.id, second.id], summary.id)
    path = await store.active_path(session.id)
    assert [m.meta.get("condensed_by") for m in path] == [summary.id, summary.id, None]
    assert path[0].meta["keep"] == 1  # other meta is kept
    assert [m.content for m in path] == ["a", "b", "sum"]  # nothing else changed

    for i in range(3):
        await store.record_context_event(
            ContextEvent(
                session_id=session.id,
                action="truncate",
                trigger="auto",
                outcome="ok",
                tokens_before=100 + i,
                tokens_after=50,
                detail={"messages_deleted": i},
            )
        )
    events = await store.context_events(session.id, limit=2)
    assert [e.tokens_before for e in events] == [101, 102]  # the newest two, oldest first
    assert events[-1].detail == {"messages_deleted": 2} and events[-1].ratio == 50 / 102
    await store.delete_session(session.id)
    assert await store.context_events(session.id) == []
