"""kill -9 in the middle of a turn loses nothing written, and the session resumes (SPEC §10, seed 002).

Each test runs the installed `cairn -p` against the fake LLM server in its own process
group, watches the database (read-only, plain sqlite3) until the turn is mid-way — a
streamed answer partly flushed, or a tool call finalised and its command running — and
SIGKILLs the group. Then: every message the run printed (`--output-format stream-json`
prints each `user` and `assistant` line once it is stored) is stored unchanged, the partial
text is there, the database is intact, and `cairn -p --resume` sends a valid request (the
orphaned tool call left out) and succeeds, without changing the stored rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, filler_text, text, tool_calls

CAIRN = Path(sys.executable).parent / "cairn"
# Generous: the first request of a process imports litellm (seconds on a slow box).
DEADLINE = 120.0
POLL = 0.05

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv"),
]


# -- helpers -------------------------------------------------------------------------------
def _db(home: Path) -> Path:
    return home / "sessions.db"  # agent.paths.db_path() under CAIRN_HOME


def _query(db: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    """Read-only: the test never writes to the database it checks."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _rows(db: Path) -> list[dict]:
    return [dict(r) for r in _query(db, "SELECT * FROM messages ORDER BY seq")]


def _wait_for(proc: subprocess.Popen, db: Path, ready, what: str) -> list[dict]:
    """Poll the database until `ready(rows)`; fail if cairn exits first or the deadline passes."""
    deadline = time.monotonic() + DEADLINE
    rows: list[dict] = []
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"cairn exited ({proc.returncode}) before {what}; rows: {rows}")
        try:
            rows = _rows(db)
        except sqlite3.Error:  # not created or migrated yet
            rows = []
        if ready(rows):
            return rows
        time.sleep(POLL)
    pytest.fail(f"timed out waiting for {what}; rows: {rows}")


def _cairn_args(srv: FakeLLMServer, workspace: Path, prompt: str, *extra: str, output: str = "json") -> list[str]:
    return [
        str(CAIRN),
        "-p",
        prompt,
        "--model",
        "openai/fake-model",
        "--api-base",
        srv.base_url,
        "--api-key",
        "sk-test",
        "--yolo",
        "--cwd",
        str(workspace),
        "--output-format",
        output,
        *extra,
    ]


def _start(args: list[str], home: Path, stdout_path: Path) -> subprocess.Popen:
    env = {**os.environ, "CAIRN_HOME": str(home)}
    with open(stdout_path, "wb") as out:
        # Its own process group, so the kill reaches cairn and nothing else of ours.
        return subprocess.Popen(
            args, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )


def _kill9(proc: subprocess.Popen) -> None:
    assert proc.poll() is None, "cairn finished before the kill: the test would prove nothing"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def _printed(stdout_path: Path) -> list[dict]:
    """Messages the killed run reported as stored (stream-json prints a `user` line once the
    prompt is stored, an `assistant` line once the answer is final)."""
    lines = [json.loads(line) for line in stdout_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        {"id": e["message_id"], "parent_id": e["parent_id"], "role": e["type"], "content": e["text"]}
        for e in lines
        if e["type"] in ("user", "assistant")
    ]


def _assert_printed_are_stored(printed: list[dict], rows: list[dict]) -> None:
    by_id = {r["id"]: r for r in rows}
    for message in printed:
        row = by_id.get(message["id"])
        assert row is not None, f"printed message {message['id']} ({message['role']}) is not stored"
        assert row["role"] == message["role"] and (row["content"] or "") == message["content"]
        assert row["parent_id"] == message["parent_id"]


def _assert_intact(db: Path) -> None:
    assert _query(db, "PRAGMA integrity_check")[0][0] == "ok"


def _resume(srv: FakeLLMServer, workspace: Path, home: Path, session_id: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CAIRN_HOME": str(home)}
    return subprocess.run(
        _cairn_args(srv, workspace, "next", "--resume", session_id),
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=DEADLINE,
    )


def _assert_valid_request(messages: list[dict]) -> None:
    """Every tool message answers a call made earlier in the same request, and vice versa."""
    called: set[str] = set()
    answered: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            called.update(tc["id"] for tc in m.get("tool_calls") or [])
        elif m["role"] == "tool":
            assert m["tool_call_id"] in called, f"tool result without its call: {m}"
            answered.add(m["tool_call_id"])
    assert called == answered, f"tool calls without a result: {called - answered}"
    assert messages[-1] == {"role": "user", "content": "next"}


# -- the tests ----------------------------------------------------------------------------------
def test_kill9_mid_stream_keeps_partial_text_and_resumes(workspace, tmp_path):
    home = tmp_path / "home"
    # ~45 s of streaming: the kill always lands mid-way.
    answer = filler_text(3000)
    with FakeLLMServer([text(answer, chunk_size=8, delay=0.02)]) as srv:
        stdout_path = tmp_path / "run1.jsonl"
        proc = _start(_cairn_args(srv, workspace, "explain the project", output="stream-json"), home, stdout_path)
        try:

            def partial_flushed(rows):  # more than the first chunk: the periodic flush ran
                return any(r["role"] == "assistant" and len(r["content"] or "") >= 100 for r in rows)

            _wait_for(proc, _db(home), partial_flushed, "a partly streamed answer in the database")
            _kill9(proc)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

        db = _db(home)
        _assert_intact(db)
        before = _rows(db)
        assert [r["role"] for r in before] == ["user", "assistant"]
        user, partial = before
        assert user["content"] == "explain the project"
        assert partial["parent_id"] == user["id"]
        assert len(partial["content"]) >= 100 and answer.startswith(partial["content"])
        assert len(partial["content"]) < len(answer)
        assert partial["status"] == "interrupted"  # never finalised
        _assert_printed_are_stored(_printed(stdout_path), before)
        [session] = _query(db, "SELECT id, head_id FROM sessions")
        assert session["head_id"] == partial["id"]

        srv.add(text("Resumed fine."))
        out = _resume(srv, workspace, home, session["id"])
        assert out.returncode == 0, out.stderr
        assert [m["role"] for m in _printed_from(out.stdout)] == ["user", "assistant"]

        request = srv.requests[-1]["messages"]
        _assert_valid_request(request)
        convo = [m for m in request if m["role"] != "system"]
        assert convo[0] == {"role": "user", "content": "explain the project"}
        assert any(
            m["role"] == "assistant" and m["content"] and partial["content"].startswith(m["content"][:50])
            for m in convo[1:-1]
        ), "the partial answer is part of the resumed conversation"

    after = _rows(db)
    assert after[:2] == before, "stored rows are not changed by resuming"
    assert [r["role"] for r in after[2:]] == ["user", "assistant"]
    assert after[2]["parent_id"] == partial["id"] and after[3]["content"] == "Resumed fine."
    _assert_intact(db)


def test_kill9_mid_tool_leaves_orphan_out_of_next_request(workspace, tmp_path):
    home = tmp_path / "home"
    pid_file = workspace / "tool.pid"
    # The shell leads the command's own process group: record it so the test can clean up.
    command = f"echo $$ > {pid_file.name}; exec sleep 30"
    with FakeLLMServer(
        [
            tool_calls([("call_sleep", "terminal-execute", {"command": command})], text="Running it."),
        ]
    ) as srv:
        stdout_path = tmp_path / "run1.jsonl"
        proc = _start(_cairn_args(srv, workspace, "run the slow thing", output="stream-json"), home, stdout_path)
        tool_pgid = None
        try:

            def tool_running(rows):
                finalised = any(r["role"] == "assistant" and r["tool_calls"] and r["status"] == "ok" for r in rows)
                return finalised and pid_file.exists() and pid_file.read_text().strip().isdigit()

            rows = _wait_for(proc, _db(home), tool_running, "the tool call stored and its command running")
            tool_pgid = int(pid_file.read_text().strip())
            assert not any(r["role"] == "tool" for r in rows)
            _kill9(proc)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if tool_pgid is not None:  # the command has its own group; SIGKILL of cairn cannot reach it
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(tool_pgid, signal.SIGKILL)

        db = _db(home)
        _assert_intact(db)
        before = _rows(db)
        assert [r["role"] for r in before] == ["user", "assistant"], "no tool result: the command never finished"
        user, orphan = before
        assert user["content"] == "run the slow thing"
        assert orphan["content"] == "Running it." and orphan["parent_id"] == user["id"]
        assert [tc["id"] for tc in json.loads(orphan["tool_calls"])] == ["call_sleep"]
        printed = _printed(stdout_path)
        assert [m["role"] for m in printed] == ["user", "assistant"]
        _assert_printed_are_stored(printed, before)
        [session] = _query(db, "SELECT id, head_id FROM sessions")
        assert session["head_id"] == orphan["id"]

        srv.add(text("Resumed fine."))
        out = _resume(srv, workspace, home, session["id"])
        assert out.returncode == 0, out.stderr
        assert [m["role"] for m in _printed_from(out.stdout)] == ["user", "assistant"]

        request = srv.requests[-1]["messages"]
        _assert_valid_request(request)
        convo = [m for m in request if m["role"] != "system"]
        # The whole orphaned assistant message is left out, its text included (seed 002).
        assert convo == [{"role": "user", "content": "run the slow thing"}, {"role": "user", "content": "next"}]
        assert "Running it." not in json.dumps(request)
        assert "call_sleep" not in json.dumps(request)

    after = _rows(db)
    assert after[:2] == before, "the orphaned row is still stored, unchanged"
    assert [r["role"] for r in after[2:]] == ["user", "assistant"]
    assert after[2]["parent_id"] == orphan["id"] and after[3]["content"] == "Resumed fine."
    _assert_intact(db)


def _printed_from(stdout: str) -> list[dict]:
    """A finished json run's stored messages (its one result object's `messages`)."""
    return json.loads(stdout)["messages"]
