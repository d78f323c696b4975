"""A turn's errors and notices are stored beside the session (agent/runtime/notice_log.py),
come back with its history, and never change what the model is sent."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from agent.paths import db_path
from agent.runtime.ops import Prompt
from tests.fakes.llm_server import error, text


async def _turn_with_401(open_runtime) -> str:
    """A session whose first prompt hit a 401: its id."""
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hello again"))
        assert [e.type for e in runtime.events if e.type == "turn_error"] == ["turn_error"]
        return runtime.session.id
    finally:
        await runtime.close()


async def test_a_401_is_stored_after_its_prompt_and_shown_with_the_history(server, open_runtime):
    server.add(error(401))
    session_id = await _turn_with_401(open_runtime)
    runtime = await open_runtime(continue_last=True)
    try:
        assert runtime.session.id == session_id
        history = await runtime.history_tail(200)
        notices = await runtime.history_notices(history)
    finally:
        await runtime.close()
    assert [m.content for m in history] == ["hello again"]
    (notice,) = notices
    assert notice.kind == "error" and notice.source == "error" and notice.after_id == history[0].id
    assert "Authentication failed" in notice.text


async def test_start_up_notices_are_not_stored(server, open_runtime):
    """Only what a turn says: a notice emitted between turns would repeat at every launch."""
    from agent.turn.events import Notice

    runtime = await open_runtime()
    try:
        runtime.agent.emit(Notice(message="commands cannot be sandboxed here"))
        assert await runtime.store.notices(runtime.session.id, [None]) == []
    finally:
        await runtime.close()


async def test_the_next_request_is_the_same_with_or_without_a_stored_notice(server, open_runtime, monkeypatch):
    """The same database twice, once with its stored 401 line removed: continuing either sends
    byte-identical request bodies."""
    server.add(error(401))
    await _turn_with_401(open_runtime)
    home = Path(os.environ["CAIRN_HOME"])
    bare = home.parent / (home.name + "-bare")
    shutil.copytree(home, bare)
    with sqlite3.connect(bare / db_path().name) as conn:
        assert conn.execute("DELETE FROM notices").rowcount == 1

    bodies = []
    for folder in (home, bare):
        monkeypatch.setenv("CAIRN_HOME", str(folder))
        server.add(text("ok"))
        before = len(server.requests)
        runtime = await open_runtime(continue_last=True)
        try:
            await runtime.submit(Prompt("try again"))
        finally:
            await runtime.close()
        (body,) = server.requests[before:]
        bodies.append(body)
    assert bodies[0] == bodies[1]
    assert [m["content"] for m in bodies[0]["messages"] if m["role"] == "user"][-2:] == ["hello again", "try again"]


async def test_a_missing_attachments_line_follows_its_prompt(server, open_runtime):
    """`@missing.py: … not attached` is said after the prompt was stored: it follows it."""
    server.add(text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("look at @missing.py"))
        history = await runtime.history()
        notices = await runtime.history_notices(history)
    finally:
        await runtime.close()
    said = [e.message for e in runtime.events if e.type == "notice"]
    assert any("missing.py" in s for s in said)
    assert [n.text for n in notices if "missing.py" in n.text] == [s for s in said if "missing.py" in s]
    assert all(n.after_id == history[0].id for n in notices if "missing.py" in n.text)
