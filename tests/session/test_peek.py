"""The first screen's read-only look at a session (agent/session/peek.py) agrees with the store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent.session.models import Message, ToolCall
from agent.session.peek import peek_tail
from agent.session.store import Store
from agent.ui.early_history import history_lines


@pytest.fixture
async def db(tmp_path):
    path = tmp_path / "sessions.db"
    store = await Store.open(path)
    yield path, store
    await store.close()


async def _conversation(store, cwd="/w", turns=3):
    session = await store.create_session(cwd=cwd, model="m")
    for i in range(turns):
        await store.append(session, Message(role="user", content=f"question {i}"))
        call = ToolCall(id=f"c{i}", name="terminal-execute", arguments='{"command": "pytest -q"}')
        await store.append(session, Message(role="assistant", content=None, tool_calls=[call]))
        await store.append(
            session,
            Message(
                role="tool",
                tool_call_id=call.id,
                tool_name=call.name,
                content='{"exitCode": 0, "stdout": "ok\\nok", "stderr": ""}',
            ),
        )
        await store.append(session, Message(role="assistant", content=f"answer {i}"))
    return session


async def test_tail_matches_the_stores_active_path(db):
    path, store = db
    session = await _conversation(store)
    for limit in (1, 5, 12, 100):
        peeked = peek_tail(path, resume_id=session.id, limit=limit)
        stored = await store.active_path(session.id, limit=limit)
        assert [(m["role"], m["content"]) for m in peeked] == [(m.role, m.content) for m in stored]
    assert peeked[1]["tool_calls"] == [
        {"id": "c0", "name": "terminal-execute", "arguments": '{"command": "pytest -q"}'}
    ]


async def test_only_the_active_branch_after_a_rewind(db):
    path, store = db
    session = await _conversation(store, turns=2)
    path_now = await store.active_path(session.id)
    session = await store.set_head(session, path_now[3].id)  # back to the end of the first turn
    await store.append(session, Message(role="user", content="a different second question"))
    contents = [m["content"] for m in peek_tail(path, resume_id=session.id)]
    assert contents[-1] == "a different second question" and "question 1" not in contents


async def test_prefix_and_latest_in_folder(db):
    path, store = db
    await _conversation(store, cwd="/a")
    newest = await _conversation(store, cwd="/a", turns=1)
    other = await _conversation(store, cwd="/b", turns=1)
    assert peek_tail(path, resume_id=other.id[:8])[-1]["content"] == "answer 0"
    assert len(peek_tail(path, cwd="/a")) == 4  # the newest session of /a: one turn
    assert peek_tail(path, cwd="/a")[0]["content"] == (await store.active_path(newest.id))[0].content
    assert peek_tail(path, cwd="/nowhere") is None
    assert peek_tail(path, resume_id="no-such-id") is None
    assert peek_tail(path, resume_id="") is None
    assert peek_tail(path, resume_id="%") is None  # LIKE wildcards are escaped, not a match-all


async def test_latest_in_folder_on_a_millisecond_tie_agrees_with_the_store(db, frozen_clock):
    """Every write in one millisecond: the first screen of `--continue` shows the session the
    store continues, the one written last (not the one created last)."""
    path, store = db
    first = await _conversation(store, cwd="/a", turns=1)
    await _conversation(store, cwd="/a", turns=1)
    await store.append(first, Message(role="user", content="back to the first"))
    assert (await store.latest_session("/a")).id == first.id
    assert peek_tail(path, cwd="/a")[-1]["content"] == "back to the first"


async def test_latest_in_folder_before_the_store_migrated(tmp_path):
    """A database an older cairn wrote (no `touched` yet) is still peeked, in the order the
    store will give it once migrated: the newest `updated_at`, a tie to the later row."""
    import sqlite3

    from agent.session.schema import MIGRATIONS

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for script in MIGRATIONS[:3]:
        conn.executescript(script)
    for sid, updated in (("x", 2000), ("y", 2000), ("old", 1000)):
        conn.execute(
            "INSERT INTO sessions (id, cwd, created_at, updated_at, head_id) VALUES (?, '/a', 0, ?, ?)",
            (sid, updated, f"m-{sid}"),
        )
        conn.execute(
            "INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES (?, ?, 1, 'user', ?, 0)",
            (f"m-{sid}", sid, f"in {sid}"),
        )
    conn.commit()
    conn.close()
    assert [m["content"] for m in peek_tail(path, cwd="/a")] == ["in y"]


async def test_no_database_or_not_a_database(tmp_path):
    assert peek_tail(tmp_path / "missing.db", resume_id="x") is None
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not sqlite at all" * 100)
    assert peek_tail(bad, resume_id="x") is None


async def test_lines_show_user_assistant_and_tool_summaries(db):
    path, store = db
    session = await _conversation(store, turns=1)
    await store.append(session, Message(role="user", content='<command name="review">\nlook\n</command>'))
    await store.append(session, Message(role="assistant", content="evil \x1b[2J text " + "word " * 60))
    lines = history_lines(peek_tail(path, resume_id=session.id), width=60)
    text = "\n".join(lines)
    assert "question 0" in text and "answer 0" in text
    assert "terminal-execute" in text and "$ pytest -q" in text and "exit 0 · 2 lines" in text
    assert "/review" in text and "<command" not in text
    assert "\x1b[2J" not in text and "␛[2J" in text  # model text cannot drive the terminal
    plain = [line for line in lines if "word" in line]
    assert len(plain) > 1 and all(len(line) <= 60 for line in plain)  # wrapped to the chat's width


def test_peek_and_lines_import_only_the_standard_library():
    code = (
        "import sys, agent.session.peek, agent.ui.early_history, agent.ui.early, agent.paths;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'textual', 'aiosqlite',"
        " 'litellm', 'rich', 'agent') and m not in ('agent', 'agent.session', 'agent.session.peek', 'agent.ui',"
        " 'agent.ui.early', 'agent.ui.early_history', 'agent.ui.widgets', 'agent.ui.widgets.tool_render',"
        " 'agent.paths', 'agent.session.schema', 'agent.fs', 'agent.fs.terminal_text')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
