"""Running one hook command: stdin, the workspace, no keys, bounded output, a killed group."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from agent.hooks.runner import MAX_OUTPUT_BYTES, run_hook
from agent.process.secrets import remember_secret


def hook(command: str, workspace: Path, payload: dict | None = None, timeout: float = 30):
    data = json.dumps(payload or {"hook_event_name": "PreToolUse"}).encode()
    return asyncio.run(run_hook(command, data, cwd=workspace, timeout=timeout))


def test_the_hook_reads_its_json_on_stdin_in_the_workspace(workspace):
    run = hook('cat; printf "\\n%s" "$PWD" >&2; exit 3', workspace, {"hook_event_name": "Stop", "x": 1})
    assert run.exit_code == 3 and not run.timed_out
    assert json.loads(run.stdout) == {"hook_event_name": "Stop", "x": 1}
    assert run.stderr.strip() == str(workspace)


def test_the_hook_never_sees_cairns_keys(workspace, monkeypatch):
    monkeypatch.setenv("CAIRN_API_KEY", "sk-cairn-own-key-123456")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key-abcdef")
    remember_secret("sk-provider-key-abcdef")
    run = hook("env", workspace)
    assert "sk-cairn-own-key-123456" not in run.stdout and "sk-provider-key-abcdef" not in run.stdout
    assert f"CLAUDE_PROJECT_DIR={workspace}" in run.stdout.splitlines()


def test_output_is_bounded(workspace):
    run = hook("head -c 2000000 /dev/zero | tr '\\0' x", workspace)
    assert run.exit_code == 0
    assert len(run.stdout) < MAX_OUTPUT_BYTES + 100 and "more bytes of output dropped" in run.stdout


def test_a_hook_that_does_not_read_its_input_is_fine(workspace):
    big = {"hook_event_name": "PostToolUse", "tool_response": {"stdout": "x" * 1_000_000}}
    run = hook("exit 0", workspace, big)
    assert run.exit_code == 0


def test_a_hanging_hook_is_killed_with_everything_it_started(tmp_path, workspace):
    pid_file = tmp_path / "pid"
    run = hook(f"sleep 600 & echo $! > {pid_file}; wait", workspace, timeout=0.5)
    assert run.timed_out and run.exit_code is None
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_background_child_holding_the_pipes_does_not_make_it_hang(workspace):
    run = hook("(sleep 5 &) ; echo done", workspace, timeout=60)
    assert run.exit_code == 0 and not run.timed_out and run.stdout.strip() == "done"


def test_cancelling_kills_the_hook(tmp_path, workspace):
    pid_file = tmp_path / "pid"

    async def main():
        task = asyncio.ensure_future(run_hook(f"echo $$ > {pid_file}; sleep 600", b"{}", cwd=workspace, timeout=600))
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_command_that_is_not_found_is_a_failure_not_a_crash(workspace):
    run = hook("/no/such/hook-program", workspace)
    assert run.exit_code == 127 and "not found" in run.stderr


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie nobody reaped yet is dead for this purpose
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
