"""A full disk mid-session: the write fails with SQLite's real SQLITE_FULL (the database is
capped at its current size with `max_page_count`), the user reads one sentence saying what
was not saved and what to do, and nothing already saved is lost."""

from __future__ import annotations

import pytest

from agent.runtime.ops import Prompt
from agent.session.errors import StoreWriteError
from tests.fakes.llm_server import text
from tests.hostile.conftest import bounded
from tests.loop.conftest import of_type
from tests.loop.test_provider_faults import assert_readable

# A hang detector, not a duration: the first turn imports litellm, slow on a loaded machine.
TURN_BOUND = 120


async def _fill(store) -> None:
    async with store.conn.execute("PRAGMA page_count") as cur:
        (pages,) = await cur.fetchone()
    await store.conn.execute(f"PRAGMA max_page_count = {pages}")


async def _unfill(store) -> None:
    await store.conn.execute("PRAGMA max_page_count = 1073741823")


async def test_a_full_disk_during_a_turn_is_one_readable_sentence_and_loses_nothing(server, open_runtime):
    server.add(text("first answer"), text("after space was freed"))
    runtime = await open_runtime()
    try:
        await bounded(runtime.submit(Prompt("before")), TURN_BOUND)
        saved = [(m.role, m.content) for m in await runtime.history()]
        await _fill(runtime.store)
        await bounded(runtime.submit(Prompt("x" * 200_000)), TURN_BOUND)  # needs new pages: SQLITE_FULL
        (err,) = of_type(runtime.events, "turn_error")
        assert "Could not save to the session database" in err.message
        assert "disk" in err.message and "full" in err.message and "free some space" in err.message
        assert "OperationalError" not in err.message and "StoreWriteError" not in err.message
        assert_readable(err.message)
        assert [(m.role, m.content) for m in await runtime.history()] == saved  # rolled back, not torn
        await _unfill(runtime.store)
        await bounded(runtime.submit(Prompt("again")), TURN_BOUND)  # the session goes on once there is room
        assert [m.content for m in await runtime.history()][-2:] == ["again", "after space was freed"]
    finally:
        await runtime.close()


async def test_a_failed_write_raises_the_typed_error_and_the_store_stays_usable(tmp_path):
    from agent.session.models import Message
    from agent.session.store import Store

    store = await Store.open(tmp_path / "s.db")
    try:
        session = await store.create_session(cwd=str(tmp_path))
        await _fill(store)
        with pytest.raises(StoreWriteError, match="disk holding it is full"):
            await store.append(session, Message(role="user", content="y" * 500_000))
        await _unfill(store)
        await store.append(session, Message(role="user", content="fits now"))
        assert [m.content for m in await store.all_messages(session.id)] == ["fits now"]
    finally:
        await store.close()
