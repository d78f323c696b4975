"""/copy in a real terminal (tmux with `set-clipboard on`): its OSC 52 becomes a tmux paste
buffer holding the copied text, while the streamed answer alone made none (the containment of
tests/ui/test_escapes_tmux.py holds with /copy in the app).

No display in the pane (DISPLAY and WAYLAND_DISPLAY unset), so OSC 52 is the only way, and
inside tmux (the pane has TMUX set) the notice says what tmux needs.
"""

from __future__ import annotations

import shlex
import time

from tests.e2e.test_tmux import ANSWER_TIMEOUT, READY_TEXT, START_TIMEOUT, Tmux, cairn_argv, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text

BLOCK_ONE = "pip install cairn"
BLOCK_TWO = 'def greet(name):\n    return f"hi {name}"'
ANSWER = f"Install it:\n\n```bash\n{BLOCK_ONE}\n```\n\nThen write:\n\n```python\n{BLOCK_TWO}\n```\n\nThat is all."


def buffers(tmux: Tmux) -> str:
    return tmux.run("list-buffers").stdout


def wait_for_buffer(tmux: Tmux, expected: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        got = tmux.run("show-buffer").stdout
        if got == expected:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"tmux's newest buffer is {got!r}, not {expected!r}; screen:\n{tmux.screen()}")
        time.sleep(0.05)


def test_copy_reaches_tmuxs_clipboard_by_osc_52(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    with FakeLLMServer([text(ANSWER, chunk_size=5)]) as server:
        argv = cairn_argv(home, ws, server.base_url)
        line = " ".join(shlex.quote(p) for p in [argv[0], "-u", "DISPLAY", "-u", "WAYLAND_DISPLAY", *argv[1:]])
        tmux = Tmux()
        try:
            tmux.start(line)
            tmux.run("set-option", "-s", "set-clipboard", "on")
            tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            tmux.send("show me the code", "Enter")
            tmux.wait_for("That is all.", timeout=ANSWER_TIMEOUT)
            assert buffers(tmux) == ""  # the answer alone: no clipboard

            tmux.send("/copy", "Enter")
            tmux.wait_for_words(
                f"Copied the last answer ({len(ANSWER)} characters) to the clipboard with OSC 52",
                "tmux needs `set -g set-clipboard on`",
                timeout=START_TIMEOUT,
            )
            wait_for_buffer(tmux, ANSWER, timeout=START_TIMEOUT)

            tmux.send("/copy 2", "Enter")
            tmux.wait_for_words("Copied code block 2 of the last answer", timeout=START_TIMEOUT)
            wait_for_buffer(tmux, BLOCK_TWO, timeout=START_TIMEOUT)
            assert len(buffers(tmux).splitlines()) == 2  # one per /copy, none from the answer
        finally:
            tmux.kill()
