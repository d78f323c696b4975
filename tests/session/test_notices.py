"""The `notices` table: a turn's lines kept beside the messages (agent/session/store/notices.py)."""

from __future__ import annotations

import sqlite3

from agent.session.export import export_markdown
from agent.session.models import Message, SessionNotice
from agent.session.schema import MIGRATIONS
from agent.session.store import Store


async def test_notices_come_back_by_the_message_they_followed(store):
    session = await store.create_session(cwd="/w")
    early = await store.add_notice(SessionNotice(session_id=session.id, text="before anything"))
    user = await store.append(session, Message(role="user", content="hello"))
    await store.add_notice(SessionNotice(session_id=session.id, after_id=user.id, kind="error", text="401"))
    await store.add_notice(SessionNotice(session_id=session.id, after_id=user.id, text="hook line", source="hook"))
    await store.add_notice(SessionNotice(session_id=session.id, after_id="elsewhere", text="another branch"))

    found = await store.notices(session.id, [user.id])
    assert [(n.kind, n.source, n.text) for n in found] == [("error", "notice", "401"), ("info", "hook", "hook line")]
    assert [n.text for n in await store.notices(session.id, [None, user.id])] == ["before anything", "401", "hook line"]
    assert early.id > 0

    await store.delete_session(session.id)
    assert await store.notices(session.id, [None, user.id, "elsewhere"]) == []


async def test_an_empty_session_is_pruned_with_its_notices(store):
    session = await store.create_session(cwd="/w")
    await store.add_notice(SessionNotice(session_id=session.id, text="UserPromptSubmit hook x blocked the prompt"))
    assert await store.prune_if_empty(session.id)
    assert await store.notices(session.id, [None]) == []


async def test_a_database_from_before_notices_opens_and_keeps_its_history(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version, script in enumerate(MIGRATIONS[:6], start=1):
        conn.executescript(script)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    conn.execute("INSERT INTO sessions (id, cwd, created_at, updated_at, head_id) VALUES ('s', '/a', 0, 0, 'm')")
    conn.execute(
        "INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES ('m', 's', 1, 'user', 'hi', 0)"
    )
    conn.commit()
    conn.close()

    store = await Store.open(path)
    try:
        assert await store.schema_version() == len(MIGRATIONS)
        assert [m.content for m in await store.active_path("s")] == ["hi"]
        assert await store.notices("s", [None, "m"]) == []
        await store.add_notice(SessionNotice(session_id="s", after_id="m", kind="error", text="401"))
        assert [n.text for n in await store.notices("s", ["m"])] == ["401"]
    finally:
        await store.close()


def test_the_markdown_export_quotes_each_notice_after_its_message():
    from agent.session.models import Session

    session = Session(id="s", title="t")
    user = Message(id="u", session_id="s", role="user", content="hello again")
    notice = SessionNotice(session_id="s", after_id="u", kind="error", text="Authentication failed")
    text = export_markdown(session, [user], notices=[notice])
    assert text.index("hello again") < text.index("> **Error**\n>\n> Authentication failed")


async def test_the_first_screen_shows_them_too(tmp_path):
    """`--continue`'s first frame (agent/session/peek.py, agent/ui/early_history.py) shows the
    stored error under its prompt, dimmed, as the chat does a moment later."""
    from agent.session.peek import peek_tail
    from agent.ui.early_history import DIM, history_lines

    path = tmp_path / "sessions.db"
    store = await Store.open(path)
    try:
        session = await store.create_session(cwd="/w")
        user = await store.append(session, Message(role="user", content="hello again"))
        await store.add_notice(
            SessionNotice(session_id=session.id, after_id=user.id, kind="error", text="Authentication failed")
        )
    finally:
        await store.close()
    peeked = peek_tail(path, resume_id=session.id)
    assert [(m["role"], m["content"]) for m in peeked] == [("user", "hello again"), ("notice", "Authentication failed")]
    lines = history_lines(peeked, width=80)
    assert lines[-1] == f"  {DIM}Authentication failed\x1b[0m"
    assert "hello again" in lines[-3]
