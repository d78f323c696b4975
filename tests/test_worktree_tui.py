"""`cairn -w NAME` in the TUI (the installed `cairn` in tmux): the session runs in the worktree,
so what the model creates lands there and not in the main checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_tmux import ANSWER_TIMEOUT, READY_TEXT, START_TIMEOUT, Tmux, cairn_line, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

pytestmark = [*pytestmark]  # tmux, cairn installed: as tests/e2e/test_tmux.py


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    return root


def test_the_tui_runs_in_the_worktree(tmp_path, repo):
    home = tmp_path / "home"
    home.mkdir()
    create = ("c1", "filesystem-create", {"filePath": "made.txt", "content": "here\n"})
    tmux = Tmux()
    with FakeLLMServer([tool_calls([create]), text("Created it. All done.")]) as server:
        try:
            tmux.start(cairn_line(home, repo, server.base_url, "--yolo", "-w", "ui"))
            tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            tmux.send("make a file", "Enter")
            tmux.wait_for("All done.", timeout=ANSWER_TIMEOUT)
        finally:
            tmux.kill()
    made = list((home / "worktrees").glob("project-*/ui/made.txt"))
    assert len(made) == 1 and made[0].read_text() == "here\n"
    assert not (repo / "made.txt").exists()
