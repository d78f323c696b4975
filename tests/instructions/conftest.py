"""What the instructions tests share: a home folder of their own, with Claude Code's `~/.claude`
(the variable that would move it unset), so the user's files are the test's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return folder
