"""The installed `cairn` in a real terminal (tmux): start, type a prompt, see the answer.

Runs against the scripted LLM server in this process. Uses a private tmux socket so it
never touches the user's tmux, and always kills its server at the end.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

CAIRN = Path(sys.executable).parent / "cairn"
READY_TEXT = "Ask cairn"  # the prompt's placeholder
START_TIMEOUT = 20.0
ANSWER_TIMEOUT = 60.0  # the first request imports litellm (several seconds on a slow box)

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not CAIRN.exists(), reason=f"{CAIRN} not found (run: pip install -e .)"),
]


def cairn_argv(home: Path, ws: Path, base_url: str, *extra: str) -> list[str]:
    """cairn against the fake server at `base_url`, with a data folder of its own, in `ws`."""
    return [
        "env",
        f"CAIRN_HOME={home}",
        str(CAIRN),
        "--model",
        "openai/fake",
        "--api-base",
        base_url,
        "--api-key",
        "sk-test",
        "--cwd",
        str(ws),
        *extra,
    ]


def cairn_line(home: Path, ws: Path, base_url: str, *extra: str) -> str:
    """`cairn_argv` as the shell line tmux runs."""
    return " ".join(shlex.quote(p) for p in cairn_argv(home, ws, base_url, *extra))


class Tmux:
    def __init__(self) -> None:
        self.socket = f"cairn-test-{uuid.uuid4().hex[:8]}"
        self.session = "cairn"

    def run(self, *args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env)

    def start(self, command: str, width: int = 120, height: int = 36) -> None:
        result = self.run("new-session", "-d", "-s", self.session, "-x", str(width), "-y", str(height), command)
        assert result.returncode == 0, result.stderr

    def keep_panes(self) -> None:
        """A pane whose program exited stays readable (what it printed last, e.g. the resume hint)."""
        self.run("set-option", "-t", self.session, "remain-on-exit", "on")

    def new_window(self, command: str) -> None:
        result = self.run("new-window", "-t", self.session, command)
        assert result.returncode == 0, result.stderr

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.session).stdout

    def send(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.session, *keys)

    def wait_for(self, *texts: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {texts!r}; screen:\n{screen}")
            time.sleep(0.05)

    def wait_for_words(self, *texts: str, timeout: float) -> str:
        """`wait_for` for text the pane may wrap: every run of whitespace counts as one space.
        (A long notice can also reach the pane over more than one frame: its first words being
        there says nothing of its last.) Returns the screen so flattened."""
        deadline = time.monotonic() + timeout
        while True:
            flat = " ".join(self.screen().split())
            if all(t in flat for t in texts):
                return flat
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {texts!r}; screen:\n{self.screen()}")
            time.sleep(0.05)

    def kill(self) -> None:
        self.run("kill-server")


def test_prompt_answer_and_tool_result_on_screen(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    script = [
        tool_calls([("c1", "terminal-execute", '{"command": "echo hi-from-tool"}')]),
        text("The command printed hi-from-tool. All done."),
    ]
    tmux = Tmux()
    with FakeLLMServer(script) as server:
        command = cairn_line(home, ws, server.base_url, "--yolo")
        try:
            tmux.start(command)
            tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            tmux.send("run the echo tool", "Enter")
            screen = tmux.wait_for("All done.", "exit 0 · 1 line", timeout=ANSWER_TIMEOUT)
            assert "run the echo tool" in screen
            assert "terminal-execute $ echo hi-from-tool" in screen
            assert "Traceback" not in screen
            assert len(server.requests) == 2
        finally:
            tmux.kill()
