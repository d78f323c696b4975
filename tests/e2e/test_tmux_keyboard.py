"""Issue 18: a whole session driven keyboard-only in a real 80x24 terminal (tmux).

Prompt → approve (y) → expand the output (Ctrl+O, which its collapsed line names) → scroll
up (PageUp) → queue a second prompt while a turn runs → rewind (Esc Esc) → quit (Ctrl+C) →
`cairn --resume <id>` in a new window. Every step waits on what the pane shows (polled),
never on a sleep; the slow turn is held by the fake server until the test has seen the
queued message.
"""

from __future__ import annotations

import re
import threading
import time

from tests.e2e.test_tmux import READY_TEXT, Tmux, cairn_line, pytestmark  # noqa: F401 - skips without tmux
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

WIDTH, HEIGHT = 80, 24
STEP_TIMEOUT = 60.0  # generous: the first request imports litellm on a loaded 2-core box
HOLD_TIMEOUT = 180.0  # the held turn never outlives the test
MAX_PAGE_UPS = 12
COMMAND = "touch made.txt && seq -f 'row-%g' 1 40"


def chat_area(screen: str) -> str:
    """Above the prompt box and the status line."""
    return "\n".join(screen.splitlines()[:-5])


def wait_until(predicate, tmux: Tmux, timeout: float = STEP_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out; screen:\n{tmux.screen()}"
        time.sleep(0.05)


def test_a_whole_session_keyboard_only_at_80x24(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    release = threading.Event()

    def held(_request):  # the second turn answers once the test saw the third prompt queued
        release.wait(HOLD_TIMEOUT)
        return text("SECOND-ANSWER is here.")

    script = [
        tool_calls([("c1", "terminal-execute", {"command": COMMAND})]),
        text("Counted to forty. FIRST-DONE"),
        held,
        text("THIRD-ANSWER is here."),
    ]
    tmux = Tmux()
    with FakeLLMServer(script) as server:
        try:
            tmux.start(cairn_line(home, ws, server.base_url), WIDTH, HEIGHT)
            tmux.keep_panes()
            tmux.wait_for(READY_TEXT, timeout=STEP_TIMEOUT)

            # Prompt, then approve the command with the keyboard.
            tmux.send("-l", "count to forty please")
            tmux.send("Enter")
            tmux.wait_for("Yes, once", "No", timeout=STEP_TIMEOUT)
            tmux.send("y")
            # A long output starts collapsed, its line naming the key that opens it.
            screen = tmux.wait_for("FIRST-DONE", "▶ exit 0 · 40 lines · Ctrl+O to expand", timeout=STEP_TIMEOUT)
            assert (ws / "made.txt").exists()
            assert "row-10" not in screen

            # Ctrl+O expands the output in view (shown from its top); open, the hint goes.
            tmux.send("C-o")
            screen = tmux.wait_for("▼ exit 0 · 40 lines", "row-10", timeout=STEP_TIMEOUT)
            assert "Ctrl+O to expand" not in screen
            assert "count to forty please" not in chat_area(tmux.screen())  # scrolled off the top

            # PageUp scrolls the chat back to the first prompt (the prompt keeps the focus).
            for _ in range(MAX_PAGE_UPS):
                before = chat_area(tmux.screen())
                if "count to forty please" in before:
                    break
                tmux.send("PageUp")
                wait_until(lambda before=before: chat_area(tmux.screen()) != before, tmux)  # it scrolled
            assert "count to forty please" in chat_area(tmux.screen()), tmux.screen()
            tmux.send("C-End")

            # A second prompt runs (held by the server); a third typed meanwhile is queued.
            tmux.send("-l", "second slow question")
            tmux.send("Enter")
            server.wait_for_requests(3, timeout=STEP_TIMEOUT)
            tmux.send("-l", "and a third thing")
            tmux.send("Enter")
            tmux.wait_for("queued", "and a third thing", timeout=STEP_TIMEOUT)
            release.set()
            tmux.wait_for("SECOND-ANSWER", "THIRD-ANSWER", timeout=STEP_TIMEOUT)
            assert len(server.requests) == 4
            assert server.requests[3]["messages"][-1]["content"] == "and a third thing"
            # The answer on screen is not the turn's end: Esc would interrupt a turn still
            # finishing (seen on a loaded machine). Its end is the status line's hint going.
            wait_until(lambda: "esc to interrupt" not in tmux.screen(), tmux)

            # Rewind (Esc Esc): the newest turn; its prompt comes back into the input.
            tmux.send("Escape")
            tmux.send("Escape")
            tmux.wait_for("Rewind the conversation", timeout=STEP_TIMEOUT)
            tmux.send("Enter")
            wait_until(lambda: "THIRD-ANSWER" not in tmux.screen() and "Rewound" in tmux.screen(), tmux)
            assert "and a third thing" in "\n".join(tmux.screen().splitlines()[-5:])  # back in the input

            # Ctrl+C clears the draft, then twice quits; the exit says how to come back.
            tmux.send("C-c")
            tmux.wait_for(READY_TEXT, timeout=STEP_TIMEOUT)
            tmux.send("C-c")
            tmux.send("C-c")
            screen = tmux.wait_for("cairn --resume", timeout=STEP_TIMEOUT)
            session_id = re.search(r"cairn --resume (\S+)", screen).group(1)

            tmux.new_window(cairn_line(home, ws, server.base_url, "--resume", session_id))
            screen = tmux.wait_for("SECOND-ANSWER", READY_TEXT, timeout=STEP_TIMEOUT)
            assert "THIRD-ANSWER" not in screen  # rewound away: the resumed path ends before it
            assert "Traceback" not in screen
        finally:
            release.set()
            tmux.kill()
