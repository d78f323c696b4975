"""Issue 16, what the machine and the provider can do to the installed `cairn` process:
SIGTERM/SIGHUP mid-command, a provider error that echoes the key, `--api-key` in /proc,
the key in a model command's environment, a damaged, foreign, read-only or full data folder.

Each test runs the console script against the scripted server and reads the database with
plain read-only sqlite3, as tests/session/test_kill9.py does.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, error, text, tool_calls
from tests.session.test_kill9 import _query

CAIRN = Path(sys.executable).parent / "cairn"
DEADLINE = 120.0  # generous: the first request of a process imports litellm
POLL = 0.05

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv"),
]


# -- helpers -------------------------------------------------------------------------------------


def _env(home: Path, **extra: str) -> dict[str, str]:
    # Claude Code's folder beside the data folder (absent): the test's own is root's, unreadable
    # to the unprivileged user some of these runs are, and would be one more warning line.
    return {**os.environ, "CAIRN_HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / "claude-code"), **extra}


def _rows(db: Path) -> list[dict]:
    try:
        return [dict(r) for r in _query(db, "SELECT * FROM messages ORDER BY seq")]
    except sqlite3.Error:  # not created or migrated yet
        return []


def _cairn(srv: FakeLLMServer, workspace: Path, prompt: str, *extra: str, key: str | None = "sk-test") -> list[str]:
    args = [
        str(CAIRN),
        "-p",
        prompt,
        "--model",
        "openai/fake-model",
        "--api-base",
        srv.base_url,
        "--yolo",
        "--cwd",
        str(workspace),
    ]
    return args + (["--api-key", key] if key else []) + list(extra)


def _alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet counts as gone: it runs nothing)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(POLL)
    return False


def _wait_for_command(proc_alive, pid_file: Path, db: Path, what: str) -> int:
    """Until the model's command runs (its pid written) and its call is stored; the pid."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if not proc_alive():
            pytest.fail(f"cairn exited before {what}")
        ready = pid_file.exists() and pid_file.read_text().strip().isdigit()
        if ready and any(r["role"] == "assistant" and r["tool_calls"] and r["status"] == "ok" for r in _rows(db)):
            return int(pid_file.read_text())
        time.sleep(POLL)
    pytest.fail(f"timed out waiting for {what}")


def _sleep_script(pid_file: Path):
    # The shell records its pid and becomes the sleep: that pid leads the command's group.
    return [
        tool_calls(
            [("call_sleep", "terminal-execute", {"command": f"echo $$ > {pid_file.name}; exec sleep 60"})],
            text="Running it.",
        )
    ]


def _assert_answered_with_error(db: Path) -> None:
    # Closed cleanly: the last connection to close checkpoints the WAL and removes it
    # (checked before this test opens the file itself).
    assert not Path(f"{db}-wal").exists(), "the database was not closed"
    rows = _rows(db)
    (result,) = [r for r in rows if r["role"] == "tool"]
    assert result["tool_call_id"] == "call_sleep"
    assert result["content"].startswith("Error:") and result["status"] == "error"
    assert _query(db, "PRAGMA integrity_check")[0][0] == "ok"


# -- 2. SIGTERM / SIGHUP end cairn like Ctrl-C --------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_headless_signal_kills_the_command_answers_the_call_and_closes_the_database(workspace, tmp_path, signum):
    home = tmp_path / "home"
    pid_file = workspace / "tool.pid"
    err_path = tmp_path / "stderr.txt"
    with FakeLLMServer(_sleep_script(pid_file)) as srv, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            _cairn(srv, workspace, "run the slow thing"),
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=_env(home),
            start_new_session=True,
        )
        sleep_pid = None
        try:
            sleep_pid = _wait_for_command(lambda: proc.poll() is None, pid_file, home / "sessions.db", "the command")
            os.kill(proc.pid, signum)  # cairn only, as `timeout` or a closing terminal does
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if sleep_pid is not None and _alive(sleep_pid):
                os.killpg(sleep_pid, signal.SIGKILL)
                pytest.fail("the command outlived cairn")
    assert proc.returncode == 128 + signum  # it exited (not killed by the signal), non-zero
    assert _wait_gone(sleep_pid)
    stderr = err_path.read_text()
    assert "Traceback" not in stderr
    assert f"stopped by {signal.Signals(signum).name}" in stderr
    _assert_answered_with_error(home / "sessions.db")


class _Tmux:
    def __init__(self, tmp: Path) -> None:
        self.socket = f"cairn-test-{os.getpid()}-{tmp.name}"

    def run(self, *args: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("how", ["terminal closed (SIGHUP)", "SIGTERM"])
def test_tui_signal_kills_the_command_answers_the_call_and_closes_the_database(workspace, tmp_path, how):
    home = tmp_path / "home"
    pid_file = workspace / "tool.pid"
    tmux = _Tmux(tmp_path)
    with FakeLLMServer(_sleep_script(pid_file)) as srv:
        command = " ".join(
            shlex.quote(p)
            for p in [
                "env",
                f"CAIRN_HOME={home}",
                str(CAIRN),
                "--model",
                "openai/fake-model",
                "--api-base",
                srv.base_url,
                "--api-key",
                "sk-test",
                "--yolo",
                "--cwd",
                str(workspace),
            ]
        )
        sleep_pid = cairn_pid = None
        try:
            assert tmux.run("new-session", "-d", "-s", "t", "-x", "120", "-y", "36", command).returncode == 0
            cairn_pid = int(tmux.run("display", "-p", "-t", "t", "#{pane_pid}").stdout.strip())
            deadline = time.monotonic() + 30
            while "Ask cairn" not in tmux.run("capture-pane", "-p", "-t", "t").stdout:
                assert time.monotonic() < deadline, "the TUI did not start"
                time.sleep(POLL)
            tmux.run("send-keys", "-t", "t", "run the slow thing", "Enter")
            sleep_pid = _wait_for_command(lambda: _alive(cairn_pid), pid_file, home / "sessions.db", "the command")
            if how == "SIGTERM":
                os.kill(cairn_pid, signal.SIGTERM)
            else:
                tmux.run("kill-server")  # the pane's terminal goes away: its processes get SIGHUP
            assert _wait_gone(cairn_pid, 30), "cairn did not exit"
        finally:
            tmux.run("kill-server")
            if cairn_pid is not None and _alive(cairn_pid):
                os.kill(cairn_pid, signal.SIGKILL)
            if sleep_pid is not None and _alive(sleep_pid):
                os.killpg(sleep_pid, signal.SIGKILL)
                pytest.fail("the command outlived cairn")
    assert _wait_gone(sleep_pid)
    _assert_answered_with_error(home / "sessions.db")


# -- 3. secrets ------------------------------------------------------------------------------------

ECHOED_KEY = "sk-live-ECHOED4key0123456789abcdefXYZ"
OTHER_KEY = "sk-provider-ENVkey9876543210fedcbaQRS"


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def _chunk(delta: dict) -> str:
    import json

    return "data: " + json.dumps(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }
    )


@pytest.mark.parametrize("via", ["--api-key", "CAIRN_API_KEY"])
def test_a_provider_error_that_echoes_the_key_is_redacted_where_shown_and_stored(workspace, tmp_path, via):
    import json

    from tests.fakes.llm_server import raw

    home = tmp_path / "home"
    mid_stream = raw(
        [
            _chunk({"role": "assistant", "content": ""}),
            "",
            _chunk({"content": "Half"}),
            "",
            "data: " + json.dumps({"error": {"message": f"key {ECHOED_KEY} was revoked", "type": "server_error"}}),
            "",
        ]
    )
    echoed_401 = error(401, message=f"Incorrect API key provided: {ECHOED_KEY}.")
    key = ECHOED_KEY if via == "--api-key" else None
    env = _env(home) if key else _env(home, CAIRN_API_KEY=ECHOED_KEY)
    with FakeLLMServer([mid_stream, echoed_401]) as srv:
        runs = [
            subprocess.run(
                _cairn(srv, workspace, prompt, key=key),
                capture_output=True,
                text=True,
                env=env,
                stdin=subprocess.DEVNULL,
                timeout=DEADLINE,
            )
            for prompt in ("first", "second")
        ]
        assert srv.request_headers[0]["authorization"] == f"Bearer {ECHOED_KEY}"  # the key was in use
    for run in runs:
        assert run.returncode == 1
        assert "[REDACTED]" in run.stderr and ECHOED_KEY not in run.stderr and ECHOED_KEY[8:] not in run.stderr
        assert "Traceback" not in run.stderr
    partial = [r for r in _rows(home / "sessions.db") if r["role"] == "assistant"]
    assert partial and "[REDACTED]" in partial[0]["meta"]  # meta.error, as stored
    assert ECHOED_KEY.encode() not in _all_bytes(home) and ECHOED_KEY[8:].encode() not in _all_bytes(home)


@pytest.mark.parametrize("via", ["--api-key", "CAIRN_API_KEY"])
def test_the_key_is_not_in_proc_or_in_a_model_commands_environment(workspace, tmp_path, via):
    home = tmp_path / "home"
    # What a prompt-injected command would try: cairn's argv and environment through /proc, its own env.
    spy = "tr '\\0' '\\n' < /proc/$PPID/cmdline; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; env"
    key = ECHOED_KEY if via == "--api-key" else None
    env = _env(home, OPENAI_API_KEY=OTHER_KEY) if key else _env(home, CAIRN_API_KEY=ECHOED_KEY)
    with FakeLLMServer([tool_calls([("spy", "terminal-execute", {"command": spy})]), text("done")]) as srv:
        run = subprocess.run(
            _cairn(srv, workspace, "look around", key=key),
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=DEADLINE,
        )
        assert run.returncode == 0, run.stderr
        assert srv.request_headers[0]["authorization"] == f"Bearer {ECHOED_KEY}"
        sent_back = json_dumps(srv.requests[1]["messages"])
    (result,) = [r for r in _rows(home / "sessions.db") if r["role"] == "tool"]
    output = result["content"]
    assert "--api-base" in output and "CAIRN_HOME=" in output and "PATH=" in output  # it did read them
    for secret in (ECHOED_KEY, OTHER_KEY):
        assert secret not in output and secret not in sent_back
    if via == "--api-key":
        assert "--api-key\\n*****" in output  # the flag is still there, its value overwritten
    assert "\\nCAIRN_API_KEY=" not in output.split("---")[-1]  # not in the command's environment at all


def json_dumps(value) -> str:
    import json

    return json.dumps(value)


# -- 4. a data folder cairn cannot use: one clear line, the file untouched --------------------------


def _garbage(home: Path) -> bytes:
    home.mkdir()
    data = b"this is not an SQLite database\n" * 64
    (home / "sessions.db").write_bytes(data)
    return data


def _foreign(home: Path) -> bytes:
    home.mkdir()
    conn = sqlite3.connect(home / "sessions.db")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('mine')")
    conn.commit()
    conn.close()
    return (home / "sessions.db").read_bytes()


def _assert_one_clear_line(run: subprocess.CompletedProcess, *says: str) -> None:
    assert run.returncode not in (0, None), run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr
    for words in says:
        assert words in lines[0], lines[0]


@pytest.mark.parametrize("make", [_garbage, _foreign], ids=["garbage", "another program's SQLite"])
def test_a_damaged_or_foreign_sessions_db_is_named_and_left_alone(workspace, tmp_path, make):
    home = tmp_path / "home"
    before = make(home)
    db = home / "sessions.db"
    with FakeLLMServer([text("never asked")]) as srv:
        for args in (_cairn(srv, workspace, "hi"), [str(CAIRN), "session", "list"], [str(CAIRN), "context", "abc"]):
            run = subprocess.run(
                args, capture_output=True, text=True, env=_env(home), stdin=subprocess.DEVNULL, timeout=DEADLINE
            )
            _assert_one_clear_line(run, str(db), "not changed", "move it aside")
        assert not srv.requests
    assert db.read_bytes() == before
    assert sorted(p.name for p in home.iterdir()) == ["sessions.db"]


def _unprivileged() -> list[str]:
    """Root writes anywhere: run cairn as `nobody` then (skip when that is not possible)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be simulated")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def test_a_read_only_data_folder_is_named_with_what_to_do():
    prefix = _unprivileged()
    base = Path(tempfile.mkdtemp(prefix="cairn-ro-"))
    try:
        base.chmod(0o755)
        home, ws = base / "home", base / "ws"
        home.mkdir(mode=0o555)
        home.chmod(0o555)
        ws.mkdir()
        ws.chmod(0o777)
        with FakeLLMServer([text("never asked")]) as srv:
            for args in (_cairn(srv, ws, "hi"), [str(CAIRN), "session", "list"]):
                run = subprocess.run(
                    prefix + args,
                    capture_output=True,
                    text=True,
                    env=_env(home),
                    cwd=ws,
                    stdin=subprocess.DEVNULL,
                    timeout=DEADLINE,
                )
                _assert_one_clear_line(run, str(home), "read-only", "CAIRN_HOME")
            assert not srv.requests
        assert list(home.iterdir()) == []
    finally:
        (base / "home").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_a_full_disk_is_named_with_what_to_do(tmp_path):
    mount = tmp_path / "tiny"
    mount.mkdir()
    # A 96 KiB tmpfs in a private mount namespace: the migrations do not fit.
    wrap = [
        "unshare",
        "-m",
        "sh",
        "-c",
        'mount -t tmpfs -o size=96k tmpfs "$1" && shift && exec "$@"',
        "sh",
        str(mount),
    ]
    if shutil.which("unshare") is None or subprocess.run(wrap + ["true"], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tiny tmpfs here (needs unshare -m and mount rights)")
    run = subprocess.run(
        wrap + [str(CAIRN), "session", "list"],
        capture_output=True,
        text=True,
        env=_env(mount / "home"),
        stdin=subprocess.DEVNULL,
        timeout=DEADLINE,
    )
    _assert_one_clear_line(run, str(mount / "home" / "sessions.db"), "is full", "free some space")
