"""The warm backend (`CAIRN_WARM=1`, agent/headless/warm.py) through the installed `cairn -p`:
the first run is in-process and starts it; later runs are forked children with the client's
streams, folder, environment, exit code and signals; a stale backend steps aside."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, hang, text, tool_calls
from tests.headless.helpers import CAIRN, TIMEOUT, base_args, cairn, events, needs_cairn

pytestmark = needs_cairn
START_TIMEOUT = 180.0  # the backend imports litellm: slow on a loaded 2-core machine


def _log(home: Path) -> str:
    path = home / "warm" / "backend.log"
    return path.read_text() if path.exists() else ""


def _wait_for(home: Path, pattern: str, count: int = 1) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while len(re.findall(pattern, _log(home))) < count:
        assert time.monotonic() < deadline, f"{pattern!r} not in the backend log:\n{_log(home)}"
        time.sleep(0.1)


@pytest.fixture
def warm_env(_isolated_home):
    env = os.environ.copy()
    env.update(CAIRN_WARM="1", CAIRN_WARM_IDLE="60")
    yield env
    # Stop every backend the test started (by the pids they logged), whatever state it is in.
    for pid in {int(p) for p in re.findall(r"starting \(pid (\d+)\)", _log(_isolated_home))}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


def test_runs_go_through_the_backend_once_it_is_up(workspace, warm_env, _isolated_home):
    with FakeLLMServer(
        [
            text("cold"),
            text("warm"),
            tool_calls([("c1", "filesystem-read", {"filePath": "x"})]),
            text("two"),
            text("three"),
        ]
    ) as srv:
        args = base_args(srv, workspace)
        first = cairn(*args, "-p", "hi", env=warm_env)
        assert first.returncode == 0 and first.stdout == "cold\n", first.stderr
        _wait_for(_isolated_home, r"ready \(pid")
        second = cairn(*args, "-p", "hi again", env=warm_env)
        assert second.returncode == 0 and second.stdout == "warm\n", second.stderr
        assert "run pid=" in _log(_isolated_home)
        # stdin, stdout and limits through the backend: a multi-turn stream that stops at a limit.
        stdin = json.dumps({"type": "user", "text": "more"}) + "\n"
        third = cairn(
            *args,
            "--continue",
            "-p",
            "read x",
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            "--max-turns",
            "3",
            stdin=stdin,
            env=warm_env,
        )
        assert third.returncode == 0, third.stderr
        lines = events(third.stdout)
        assert [e["text"] for e in lines if e["type"] == "user"] == ["read x", "more"]
        assert lines[-1]["type"] == "result" and lines[-1]["text"] == "three"
        assert len(re.findall("run pid=", _log(_isolated_home))) == 2
        # The folder and the data are the client's: --continue found the session of the run before.
        assert [m["content"] for m in srv.requests[-1]["messages"] if m["role"] == "user"] == [
            "hi again",
            "read x",
            "more",
        ]


def test_ctrl_c_reaches_the_run_and_its_exit_code_comes_back(workspace, warm_env, _isolated_home):
    with FakeLLMServer([text("cold"), hang(300, text="thinking")]) as srv:
        srv.allow_unused = True
        args = base_args(srv, workspace)
        assert cairn(*args, "-p", "hi", env=warm_env).returncode == 0
        _wait_for(_isolated_home, r"ready \(pid")
        proc = subprocess.Popen(
            [str(CAIRN), *args, "--continue", "-p", "think"],
            env=warm_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        srv.wait_for_requests(2, timeout=TIMEOUT)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130, err
    assert "run pid=" in _log(_isolated_home) and "Traceback" not in err


def test_a_stale_backend_steps_aside(workspace, warm_env, _isolated_home):
    """Another import-time environment (or another cairn): the run happens in-process, the
    old backend exits and a current one starts."""
    with FakeLLMServer([text("one"), text("two"), text("three")]) as srv:
        args = base_args(srv, workspace)
        assert cairn(*args, "-p", "hi", env=warm_env).returncode == 0
        _wait_for(_isolated_home, r"ready \(pid")
        other = dict(warm_env, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_MODE="PRODUCTION")
        out = cairn(*args, "-p", "hi", env=other)
        assert out.returncode == 0 and out.stdout == "two\n", out.stderr
        _wait_for(_isolated_home, r"stale")
        _wait_for(_isolated_home, r"ready \(pid", count=2)
        out = cairn(*args, "-p", "hi", env=other)
        assert out.returncode == 0 and out.stdout == "three\n", out.stderr
    assert len(re.findall("run pid=", _log(_isolated_home))) == 1


def test_without_the_variable_nothing_starts(workspace, _isolated_home):
    with FakeLLMServer([text("plain")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hi")
    assert out.returncode == 0 and out.stdout == "plain\n"
    assert not (_isolated_home / "warm").exists()


def _cmdline(pid: int) -> bytes:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc/<pid>/cmdline (Linux)")
def test_the_client_hides_the_key_from_ps_while_the_backend_runs(workspace, warm_env, _isolated_home):
    """`cairn -p --api-key KEY` handed to the backend: the client waits for the whole run, and
    `ps` (its /proc/<pid>/cmdline) must not show the key meanwhile, as an in-process run hides it."""
    key = "sk-warm-client-argv-0123456789abcdef"
    with FakeLLMServer([text("cold"), hang(300, text="thinking")]) as srv:
        srv.allow_unused = True
        args = ["--model", "openai/fake-model", "--api-base", srv.base_url, "--api-key", key, "--cwd", str(workspace)]
        assert cairn(*args, "-p", "hi", env=warm_env).returncode == 0
        _wait_for(_isolated_home, r"ready \(pid")
        proc = subprocess.Popen(
            [str(CAIRN), *args, "--continue", "-p", "think"],
            env=warm_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            srv.wait_for_requests(2, timeout=TIMEOUT)  # the backend's child runs; the client waits on it
            assert "run pid=" in _log(_isolated_home)  # the run went through the backend
            deadline = time.monotonic() + 30
            shown = _cmdline(proc.pid)
            while key.encode() in shown and time.monotonic() < deadline:
                time.sleep(0.05)
                shown = _cmdline(proc.pid)
            assert proc.poll() is None  # still waiting on the run
            assert key.encode() not in shown, shown
            assert b"--api-key" in shown  # the rest of the command line is as it was
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130, err
