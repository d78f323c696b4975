"""Sessions in a real terminal (tmux): ESC ESC rewind with file restore, then
`cairn --resume` without an id → the picker → filter → open.

Drives the installed `cairn` against the scripted LLM server in this process, with the
helpers of test_tmux.py (private tmux socket, polling with deadlines).
"""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.e2e.test_tmux import ANSWER_TIMEOUT, READY_TEXT, START_TIMEOUT, Tmux, cairn_argv, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

STEP_TIMEOUT = 20.0


def edit(call_id: str, old: str, new: str):
    return tool_calls(
        [(call_id, "filesystem-edit", f'{{"filePath": "a.py", "searchContent": "{old}", "replaceContent": "{new}"}}')]
    )


def cairn_command(home: Path, ws: Path, server: FakeLLMServer, *extra: str) -> list[str]:
    return cairn_argv(home, ws, server.base_url, "--yolo", *extra)


def wait_until(predicate, what: str, timeout: float = STEP_TIMEOUT, screen=None) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f"; screen:\n{screen()}" if screen else ""))
        time.sleep(0.05)


def prompt_area(screen: str) -> str:
    """The bottom of the screen: the prompt box and the status line."""
    return "\n".join(screen.splitlines()[-8:])


def test_rewind_restores_files_then_resume_picker_opens_the_session(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    target = ws / "a.py"
    target.write_text("x = 1\n")
    script = [
        edit("c1", "x = 1", "x = 2"),
        text("Now it is two."),
        edit("c2", "x = 2", "x = 3"),
        text("Now it is three."),
        text("A fresh start."),  # the turn sent after the rewind
        text("Chore done."),  # `cairn -p` in between: a second session for the picker
    ]
    tmux = Tmux()
    with FakeLLMServer(script) as server:
        try:
            tmux.start(" ".join(shlex.quote(p) for p in cairn_command(home, ws, server)))
            tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            tmux.send("make x two", "Enter")
            tmux.wait_for("Now it is two.", timeout=ANSWER_TIMEOUT)
            tmux.send("make x three", "Enter")
            tmux.wait_for("Now it is three.", timeout=STEP_TIMEOUT)
            wait_until(lambda: target.read_text() == "x = 3\n", "the second edit", screen=tmux.screen)

            # ESC ESC: the rewind menu, newest first; pick the first turn, restore the files.
            tmux.send("Escape")
            tmux.send("Escape")
            screen = tmux.wait_for("Rewind the conversation", timeout=STEP_TIMEOUT)
            assert screen.index("make x three") < screen.rindex("make x two")
            assert "1 file changed" in screen
            tmux.send("Down")
            tmux.send("Enter")
            tmux.wait_for("Conversation and files", "Conversation only", "a.py", timeout=STEP_TIMEOUT)
            tmux.send("Enter")
            wait_until(lambda: target.read_text() == "x = 1\n", "a.py to be restored", screen=tmux.screen)
            screen = tmux.wait_for("Restored: a.py", timeout=STEP_TIMEOUT)
            assert "make x two" in prompt_area(screen), screen
            assert "Now it is two." not in screen and "Traceback" not in screen

            # The old text is in the prompt: send it as it is (a new branch), then quit.
            tmux.send("Enter")
            tmux.wait_for("A fresh start.", timeout=STEP_TIMEOUT)
            tmux.send("/quit", "Enter")
            wait_until(
                lambda: tmux.run("has-session", "-t", tmux.session).returncode != 0, "cairn to quit", screen=tmux.screen
            )
        finally:
            tmux.kill()

        # Both branches are stored: the abandoned one (the second edit) and the new one.
        conn = sqlite3.connect(home / "sessions.db")
        contents = {row[0] for row in conn.execute("SELECT content FROM messages")}
        conn.close()
        assert {"Now it is three.", "A fresh start."} <= contents

        chore = subprocess.run(
            cairn_command(home, ws, server, "-p", "tidy the chores"),
            capture_output=True,
            text=True,
            timeout=ANSWER_TIMEOUT,
        )
        assert chore.returncode == 0, chore.stderr

        tmux = Tmux()
        try:
            tmux.start(" ".join(shlex.quote(p) for p in cairn_command(home, ws, server, "--resume")))
            screen = tmux.wait_for("Resume a session", "tidy the chores", "make x two", timeout=START_TIMEOUT)
            assert screen.index("tidy the chores") < screen.index("make x two")  # newest first
            tmux.send("-l", "MAKE X")
            screen = tmux.wait_for("1 of 2", timeout=STEP_TIMEOUT)
            assert "tidy the chores" not in screen
            tmux.send("Enter")
            screen = tmux.wait_for("A fresh start.", timeout=STEP_TIMEOUT)
            assert "Resume a session" not in screen and "make x two" in screen
            assert "Now it is three." not in screen and "Traceback" not in screen
        finally:
            tmux.kill()
