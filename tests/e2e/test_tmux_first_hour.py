"""Issue 32 in a real 80×24 terminal, the two screen items its Done-means names for tmux: an
answer of plain lines keeps its lines (a single newline is a Markdown soft break, which joined
them into one paragraph), and `/context`'s report is on screen after the chat was scrolled up
(it landed below the view, as if the command had done nothing)."""

from __future__ import annotations

from tests.e2e.test_tmux import ANSWER_TIMEOUT, READY_TEXT, START_TIMEOUT, Tmux, cairn_line, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text

FILES = [f"row-{i:03d} src/module_{i}.py" for i in range(1, 7)]
LONG_ANSWER = "\n".join(f"line {i:02d} of a long answer" for i in range(1, 61))


def _start(tmux: Tmux, tmp_path, base_url: str) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    tmux.start(cairn_line(home, ws, base_url), 80, 24)
    tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)


def test_an_answer_of_plain_lines_keeps_its_lines(tmp_path):
    tmux = Tmux()
    with FakeLLMServer([text("\n".join(FILES) + "\nLINES-DONE")]) as server:
        try:
            _start(tmux, tmp_path, server.base_url)
            tmux.send("-l", "list the modules")
            tmux.send("Enter")
            screen = tmux.wait_for("LINES-DONE", timeout=ANSWER_TIMEOUT)
            rows = [row.strip() for row in screen.splitlines()]
            for line in FILES:  # each on a row of its own, as the model wrote it
                assert line in rows, screen
            assert "LINES-DONE" in rows
        finally:
            tmux.kill()


def test_context_report_is_on_screen_after_scrolling_up(tmp_path):
    tmux = Tmux()
    with FakeLLMServer([text(LONG_ANSWER + "\nLONG-DONE")]) as server:
        try:
            _start(tmux, tmp_path, server.base_url)
            tmux.send("-l", "say a lot")
            tmux.send("Enter")
            tmux.wait_for("LONG-DONE", timeout=ANSWER_TIMEOUT)
            tmux.send("C-Home")  # the chat's top: the answer's end is out of view
            screen = tmux.wait_for("say a lot", "line 01 of a long answer", timeout=START_TIMEOUT)
            assert "LONG-DONE" not in screen

            tmux.send("-l", "/context")
            tmux.send("Enter")
            # The chat went down to the report: its end (taller than the view) is on screen.
            screen = tmux.wait_for("prompt cache: policy", "last request", timeout=ANSWER_TIMEOUT)
            assert "line 01 of a long answer" not in screen  # the view went down to it
        finally:
            tmux.kill()
