"""Issue 32, item 1, in a real 80×24 terminal: a 17-line file shown for approval does not
fit; the modal says so, and PageDown (the key a reader tries) and End show the rest, with the
choices still there to answer. Issue 46: the plan review scrolls the same way, and both are
docked at the bottom, the chat's last lines in view above them."""

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
            assert "row-16" not in screen  # docked, the diff gets more rows than the 8 it had
            tmux.send("NPage")
            tmux.wait_for("row-16", timeout=STEP_TIMEOUT)
            tmux.send("End")
            screen = tmux.wait_for("row-16", timeout=STEP_TIMEOUT)
            assert "Yes, once" in screen and "PgUp/↑ to scroll back" in screen
            tmux.send("n")
            tmux.wait_for("ALL-DONE", timeout=STEP_TIMEOUT)
            assert not (ws / "new.py").exists()
        finally:
            tmux.run("kill-server")


STEPS = (f"{n}. plan-step-{n:02d}: change module_{n}.py" for n in range(1, 36))
PLAN = "## Plan: add a sha256 default\n\n" + "\n".join(STEPS)
EXPLAINED = "EXPLAINED-ABOVE: here is the plan."


def test_the_plan_review_scrolls_with_pagedown_and_leaves_the_chat_in_view_at_80x24(tmp_path):
    """Issue 46, items 2 and 9: PageDown, Down and End scroll the plan (no Tab first), with the
    approval's hint; the review is docked at the bottom and the model's words above it show."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    script = [
        tool_calls([("c1", "exit-plan-mode", {"plan": PLAN})], text=EXPLAINED),
        text("Still planning. ALL-DONE"),
    ]
    tmux = Tmux()
    with FakeLLMServer(script) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url, "--permission-mode", "plan"), 80, 24)
            tmux.wait_for(READY_TEXT, timeout=STEP_TIMEOUT)
            tmux.send("-l", "plan it")
            tmux.send("Enter")
            screen = tmux.wait_for("more lines · PgDn/↓ to scroll", "Yes, and ask before edits", timeout=STEP_TIMEOUT)
            # The chat above the docked review ends above it: the model's words stay in view.
            tmux.wait_for(EXPLAINED, "Yes, and ask before edits", timeout=STEP_TIMEOUT)
            assert "plan-step-30" not in screen
            tmux.send("NPage")
            tmux.wait_for("plan-step-12", timeout=STEP_TIMEOUT)  # no Tab first
            tmux.send("Down")
            tmux.send("End")
            screen = tmux.wait_for("plan-step-35", "PgUp/↑ to scroll back", timeout=STEP_TIMEOUT)
            assert "Yes, and ask before edits" in screen and "No, keep planning" in screen
            tmux.send("Escape")
            tmux.wait_for("ALL-DONE", timeout=STEP_TIMEOUT)
        finally:
            tmux.run("kill-server")
