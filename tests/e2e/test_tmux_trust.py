"""The installed `cairn` in a real terminal, in a fresh folder whose `.cairn/config.toml`
sets `yolo`: it asks whether to trust the folder before anything runs (agent/settings/trust.py)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_tmux import ANSWER_TIMEOUT, START_TIMEOUT, Tmux, cairn_line, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

QUESTION = "Trust this folder's project config?"


@pytest.fixture
def dirs(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    (ws / ".cairn").mkdir(parents=True)
    (ws / ".cairn" / "config.toml").write_text('yolo = true\n[permissions]\nallow_commands = ["touch"]\n')
    return home, ws


def test_a_fresh_folder_with_a_widening_config_asks_and_trust_applies_it(dirs):
    home, ws = dirs
    tmux = Tmux()
    script = [tool_calls([("c1", "terminal-execute", '{"command": "touch made-by-model"}')]), text("Made it.")]
    with FakeLLMServer(script) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url))
            screen = tmux.wait_for(QUESTION, "yolo = true", "Not now", timeout=ANSWER_TIMEOUT)
            assert 'permissions.allow_commands = ["touch"]' in screen and "Traceback" not in screen
            tmux.send("Up")
            tmux.send("Enter")
            tmux.wait_for("Trusted", timeout=START_TIMEOUT)
            record = json.loads((home / "trusted_folders.json").read_text())
            assert list(record["folders"]) == [str(ws.resolve())]
            tmux.send("make the file", "Enter")
            tmux.wait_for("Made it.", timeout=ANSWER_TIMEOUT)
            assert (ws / "made-by-model").exists()  # yolo from the trusted config: nothing asked
        finally:
            tmux.kill()


def test_not_now_ignores_the_keys_and_says_so(dirs):
    home, ws = dirs
    tmux = Tmux()
    with FakeLLMServer([text("unused")]) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url))
            tmux.wait_for(QUESTION, timeout=ANSWER_TIMEOUT)
            tmux.send("n")
            flat = tmux.wait_for_words(
                "Not using yolo, permissions.allow_commands", "is not trusted", "cairn trust", timeout=START_TIMEOUT
            )
            assert QUESTION not in flat and "Traceback" not in flat
            assert not (home / "trusted_folders.json").exists()
        finally:
            tmux.kill()
