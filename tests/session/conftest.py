"""Shared fixtures for the session tests."""

from __future__ import annotations

import types

import pytest

from agent.session.store import Store

FROZEN_MS = 1_700_000_000_000


@pytest.fixture
def frozen_clock(monkeypatch):
    """Every `now_ms()` (session and message timestamps, `updated_at` bumps) returns the same
    millisecond: what a fast machine does to writes that follow each other closely. Patches
    the `time` module as agent/session/models.py sees it, so the pydantic default factories,
    which hold `now_ms` itself, are pinned too. Returns the pinned value."""
    import agent.session.models as models

    fake = types.SimpleNamespace(time=lambda: FROZEN_MS / 1000)
    monkeypatch.setattr(models, "time", fake)
    assert models.now_ms() == FROZEN_MS
    return FROZEN_MS


@pytest.fixture
async def store(tmp_path):
    """A real session database in the test's folder."""
    s = await Store.open(tmp_path / "sessions.db")
    yield s
    await s.close()
