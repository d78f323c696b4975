"""Issue 32, item 1, in a real 80×24 terminal: a 17-line file shown for approval does not
fit; the modal says so, and PageDown (the key a reader tries) and End show the rest, with the
choices still there to answer."""

from __future__ import annotations

from tests.e2e.test_tmux import READY_TEXT, Tmux, cairn_line, pytestmark  # noqa: F401 - skips without tmux
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

STEP_TIMEOUT = 60.0  # the first request imports litellm on a loaded 2-core box
CONTENT = "".join(f"row-{i:02d} of the new file\n" for i in range(17))


def test_page_down_scrolls_a_long_diff_in_the_approval_at_80x24(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    script = [
        tool_calls([("c1", "filesystem-create", {"filePath": "new.py", "content": CONTENT})]),
        text("Not written. ALL-DONE"),
    ]
    tmux = Tmux()
    with FakeLLMServer(script) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url), 80, 24)
            tmux.wait_for(READY_TEXT, timeout=STEP_TIMEOUT)
            tmux.send("-l", "write the file")
            tmux.send("Enter")
            screen = tmux.wait_for("more lines · PgDn/↓ to scroll", "Yes, once", timeout=STEP_TIMEOUT)
            assert "row-10" not in screen and "row-16" not in screen
            tmux.send("NPage")
            tmux.wait_for("row-10", timeout=STEP_TIMEOUT)
            tmux.send("End")
            screen = tmux.wait_for("row-16", timeout=STEP_TIMEOUT)
            assert "Yes, once" in screen and "PgUp/↑ to scroll back" in screen
            tmux.send("n")
            tmux.wait_for("ALL-DONE", timeout=STEP_TIMEOUT)
            assert not (ws / "new.py").exists()
        finally:
            tmux.run("kill-server")
