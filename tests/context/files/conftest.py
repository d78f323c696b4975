"""The context-files tests share one fixture: a real store in the test's folder."""

from __future__ import annotations

import pytest

from agent.session.store import Store


@pytest.fixture
async def store(tmp_path):
    s = await Store.open(tmp_path / "sessions.db")
    yield s
    await s.close()
