"""What the commands tests share: the user's own Claude Code folder, in the test's tmp folder."""

from __future__ import annotations

import pytest


@pytest.fixture
def claude_home(tmp_path, monkeypatch):
    """The user's Claude Code folder (`$CLAUDE_CONFIG_DIR`, i.e. `~/.claude`)."""
    home = tmp_path / "dot-claude"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    return home
