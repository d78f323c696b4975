"""`cairn "fix the bug"` in a real terminal at 80×24 (issue 46): the console script's line
starts the TUI, the first screen passes the prompt on, and the app sends it as if typed."""

from __future__ import annotations

from tests.e2e.test_tmux import ANSWER_TIMEOUT, Tmux, cairn_line, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text


def test_a_prompt_on_the_command_line_is_sent(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    tmux = Tmux()
    with FakeLLMServer([text("Bug fixed, as asked.")]) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url, "fix the bug"), width=80, height=24)
            screen = tmux.wait_for("Bug fixed, as asked.", timeout=ANSWER_TIMEOUT)
            assert "fix the bug" in screen and "Traceback" not in screen and "invalid choice" not in screen
            users = [[m["content"] for m in r["messages"] if m["role"] == "user"] for r in server.requests]
            assert users == [["fix the bug"]]
        finally:
            tmux.kill()
