"""Issue 46, item 1 (the walk's 2) in a real 80×24 terminal (tmux): an older tool output opens
from the keyboard while a newer one is on screen. Ctrl+O opened only the newest block though
every block said "Ctrl+O to expand"; now the older one says "Ctrl+↑ to select", Ctrl+Up
(the terminal's own sequence, which tmux sends) selects it and Ctrl+O opens THAT block."""

from __future__ import annotations

from tests.e2e.test_tmux import READY_TEXT, Tmux, cairn_line, pytestmark  # noqa: F401 - skips without tmux
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

WIDTH, HEIGHT = 80, 24
STEP_TIMEOUT = 60.0  # the first request imports litellm on a loaded 2-core box


def test_ctrl_up_then_ctrl_o_opens_an_older_block_at_80x24(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    script = [
        tool_calls([("c1", "terminal-execute", {"command": "seq -f 'older-%g' 1 30"})]),
        tool_calls([("c2", "terminal-execute", {"command": "seq -f 'newer-%g' 1 30"})]),
        text("BOTH-DONE"),
    ]
    tmux = Tmux()
    with FakeLLMServer(script) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url, "--yolo"), WIDTH, HEIGHT)
            tmux.wait_for(READY_TEXT, timeout=STEP_TIMEOUT)
            tmux.send("-l", "count twice")
            tmux.send("Enter")
            screen = tmux.wait_for(
                "BOTH-DONE",
                "▶ exit 0 · 30 lines · Ctrl+↑ to select",  # the older block: both are in view
                "▶ exit 0 · 30 lines · Ctrl+O to expand",  # the newer one, which Ctrl+O opens now
                timeout=STEP_TIMEOUT,
            )
            assert screen.index("Ctrl+↑ to select") < screen.index("Ctrl+O to expand")

            tmux.send("C-Up")  # select the older block: its hint becomes Ctrl+O's
            screen = tmux.wait_for("Ctrl+↓ to select", timeout=STEP_TIMEOUT)
            assert screen.index("Ctrl+O to expand") < screen.index("Ctrl+↓ to select")
            tmux.send("C-o")
            screen = tmux.wait_for("older-10", "▼ exit 0 · 30 lines", timeout=STEP_TIMEOUT)
            assert "newer-10" not in screen  # the newer block stays folded
        finally:
            tmux.kill()
