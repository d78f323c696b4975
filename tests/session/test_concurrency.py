"""Several writers on one database (connections, processes, cairn -p runs): nothing is lost,
reordered or corrupted, and no `database is locked` reaches the user."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.runtime.ops import Prompt
from agent.session.models import Message
from agent.session.store import Store
from tests.fakes.llm_server import FakeLLMServer, filler_text, text, tool_calls

WRITER = """
import asyncio, sys
from pathlib import Path
from agent.session.models import Message
from agent.session.store import Store

async def main(path, n):
    store = await Store.open(Path(path))
    session = await store.create_session(cwd="/proc")
    for i in range(n):
        await store.append(session, Message(role="user", content=f"p{i}"))
    print(session.id)
    await store.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_two_connections_interleave_appends(tmp_path):
    path = tmp_path / "shared.db"
    a, b = await Store.open(path), await Store.open(path)
    try:
        shared = await a.create_session(cwd="/w")
        other = await b.get_session(shared.id)
        own = await b.create_session(cwd="/w")

        async def write(store, session, tag, n=150):
            for i in range(n):
                await store.append(session, Message(role="user", content=f"{tag}{i}"))

        await asyncio.gather(write(a, shared, "a"), write(b, own, "b"), write(b, other, "c", 50))
        counts = {s.session.id: s.message_count for s in await a.list_summaries()}
        assert counts == {shared.id: 200, own.id: 150}
        seqs = [m.seq for m in await a.all_messages(shared.id)]
        assert sorted(seqs) == list(range(1, 201))  # no seq handed out twice
    finally:
        await a.close()
        await b.close()
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_write_at_once(tmp_path):
    path = tmp_path / "procs.db"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), "300"], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    ids = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        ids.append(out.strip())
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for session_id in ids:
        rows = conn.execute("SELECT content FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        assert [r[0] for r in rows] == [f"p{i}" for i in range(300)]


OPENER = """
import asyncio, sys
from pathlib import Path
from agent.session.store import Store

async def main(path):
    store = await Store.open(Path(path))
    async with store.conn.execute("PRAGMA journal_mode") as cur:
        print((await cur.fetchone())[0])
    await store.close()

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.parametrize("round_", range(3))
def test_processes_opening_a_new_database_at_once_all_get_it(tmp_path, round_):
    """Switching a new file to WAL from several processes at once: SQLite answers all but
    one `database is locked` without waiting; each must wait and open."""
    path = tmp_path / "new.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == "wal"


def test_a_failed_open_raises_and_lets_the_process_exit(tmp_path):
    """A database that cannot be opened gives its error; the connection's thread must not
    keep the process alive after it."""
    path = tmp_path / "not-a.db"
    path.write_bytes(b"this is not an SQLite database, just some bytes" * 100)
    proc = subprocess.run([sys.executable, "-c", OPENER, str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "not a database" in proc.stderr


# -- cairn -p processes on one database (the reliability issue, item 4) -----------------------
# Each worker is the installed console script running one long `-p` turn: the fake server
# (one for all of them, answering from the request) holds every worker's first request
# until all have started, then keeps calling tools — a file created, a command run — with
# a streamed text each round, for `seconds`. So the processes write messages, streamed
# flushes, tool results and file checkpoints at the same time, the whole time, after
# opening (and migrating) the database at the same time.

CAIRN = Path(sys.executable).parent / "cairn"
WRITE_SECONDS = float(os.environ.get("CAIRN_CONCURRENCY_SECONDS", "10"))
START_TIMEOUT = 180.0  # every worker imports litellm first: slow on a busy box


class Writers:
    """The fake model of every worker: `worker <tag>` prompts, tool rounds until time is up."""

    def __init__(self, workers: int, seconds: float) -> None:
        self.workers, self.seconds = workers, seconds
        self.seen: set[str] = set()
        self.go = threading.Event()
        self.ends: float = 0.0
        self.lock = threading.Lock()
        self.server = FakeLLMServer([self.route], repeat=True)

    def route(self, request: dict):
        messages = request["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        tag = messages[last_user]["content"].split()[-1]
        round_ = sum(m["role"] == "assistant" for m in messages[last_user:])
        with self.lock:
            self.seen.add(tag)
            if len(self.seen) == self.workers and not self.go.is_set():
                self.ends = time.monotonic() + self.seconds
                self.go.set()
        assert self.go.wait(START_TIMEOUT), f"only {sorted(self.seen)} of {self.workers} workers started"
        if time.monotonic() >= self.ends:
            return text(f"{tag} done after {round_} rounds.")
        call = (
            ("filesystem-create", {"filePath": f"{tag}-r{round_}.txt", "content": f"{tag} {round_}\n"})
            if round_ % 2 == 0
            else ("terminal-execute", {"command": f"echo {tag}-{round_}"})
        )
        return tool_calls([(f"{tag}-{round_}", *call)], text=filler_text(40), chunk_size=8, delay=0.004)

    def start(self, home: Path, workspace: Path, tag: str, *extra: str) -> subprocess.Popen:
        args = [
            str(CAIRN),
            "-p",
            f"worker {tag}",
            "--model",
            "openai/fake-model",
            "--api-base",
            self.server.base_url,
            "--api-key",
            "sk-test",
            "--yolo",
            "--cwd",
            str(workspace),
            "--output-format",
            "json",
            *extra,
        ]
        return subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "CAIRN_HOME": str(home)},
        )


def run_writers(home: Path, workers: list[tuple[str, Path, tuple[str, ...]]], seconds: float) -> dict[str, list]:
    """Start every worker at once; wait; check each exited 0 with a clean stderr. Returns the
    messages each printed (json mode's result object holds every message the run stored)."""
    writers = Writers(len(workers), seconds)
    try:
        procs = {tag: writers.start(home, ws, tag, *extra) for tag, ws, extra in workers}
        printed: dict[str, list] = {}
        for tag, proc in procs.items():
            out, err = proc.communicate(timeout=START_TIMEOUT + seconds + 60)
            assert proc.returncode == 0 and err == "", f"worker {tag}: exit {proc.returncode}, stderr {err!r}"
            printed[tag] = json.loads(out)["messages"]
            assert printed[tag][-1]["content"].startswith(f"{tag} done"), f"worker {tag} did not finish its turn"
        return printed
    finally:
        writers.server.close()


def check_database(db: Path, printed: dict[str, list]) -> None:
    """Nothing lost, nothing reordered: each worker's messages are stored as printed, in one
    parent chain whose seqs increase; every parent is in the same session."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = {r["id"]: dict(r) for r in conn.execute("SELECT * FROM messages")}
        sessions = {r["id"]: dict(r) for r in conn.execute("SELECT * FROM sessions")}
    finally:
        conn.close()
    for row in rows.values():
        assert row["parent_id"] is None or rows[row["parent_id"]]["session_id"] == row["session_id"]
    for tag, messages in printed.items():
        for previous, message in zip(messages, messages[1:], strict=False):
            assert message["parent_id"] == previous["id"], f"worker {tag}: chain broken at {message['id']}"
        for message in messages:
            row = rows.get(message["id"])
            assert row is not None, f"worker {tag}: message {message['id']} lost"
            assert (row["content"], row["parent_id"], row["role"]) == (
                message["content"],
                message["parent_id"],
                message["role"],
            )
        seqs = [rows[m["id"]]["seq"] for m in messages]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"worker {tag}: order lost"
    # Every stored row is one a worker printed: nothing half written besides.
    assert set(rows) == {m["id"] for ms in printed.values() for m in ms}
    for session_id, session in sessions.items():
        assert session["head_id"] in {ms[-1]["id"] for ms in printed.values() if ms[0]["session_id"] == session_id}


def _assert_busy(printed: dict[str, list]) -> None:
    for tag, messages in printed.items():  # a few rounds at least, or the test proves nothing
        assert sum(m["role"] == "tool" for m in messages) >= 4, f"worker {tag} wrote too little: {len(messages)}"


@pytest.mark.slow
@pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
@pytest.mark.parametrize("count", [2, 4])
def test_cairn_processes_on_different_sessions(tmp_path, count):
    home = tmp_path / "home"
    workers = []
    for i in range(count):
        (tmp_path / f"ws{i}").mkdir()
        workers.append((f"w{i}", tmp_path / f"ws{i}", ()))
    printed = run_writers(home, workers, WRITE_SECONDS)
    _assert_busy(printed)
    assert len({ms[0]["session_id"] for ms in printed.values()}) == count
    check_database(home / "sessions.db", printed)


async def _seed_session(db: Path, workspace: Path) -> list[dict]:
    """A session with one finished exchange in `workspace`, as a run would have left it."""
    store = await Store.open(db)
    try:
        session = await store.create_session(cwd=str(workspace), model="openai/fake-model")
        first = await store.append(session, Message(role="user", content="hello"))
        second = await store.append(session, Message(role="assistant", content="Hi."))
        return [first.model_dump(), second.model_dump()]
    finally:
        await store.close()


BARRIER = """
import pathlib, sys, time
folder = pathlib.Path(sys.argv[1]); folder.mkdir(exist_ok=True)
(folder / str(time.monotonic_ns())).touch()
deadline = time.monotonic() + 60
while len(list(folder.iterdir())) < int(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.02)
"""


def _both_open_before_either_writes(home: Path, folder: Path, workers: int) -> None:
    """Starting "at once" made sure: a UserPromptSubmit hook (it runs after a process has opened the
    session and before it stores its prompt) waits until every worker has reached it. A
    process that opened the session after the other stored its prompt would rightly go on
    from that prompt (the head it opened), and the two branches this test is about would
    not be there."""
    script = home / "barrier.py"
    home.mkdir(parents=True, exist_ok=True)
    script.write_text(BARRIER)
    command = f"{sys.executable} {script} {folder} {workers}"
    (home / "config.toml").write_text(f"[[hooks.UserPromptSubmit]]\ncommand = {json.dumps(command)}\ntimeout = 90\n")


@pytest.mark.slow
@pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
def test_two_cairn_processes_on_one_session(tmp_path):
    """--continue and --resume of the same session at once: each process continues its own
    conversation, so the tree gets two branches from the shared start, both whole."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    shared = asyncio.run(_seed_session(home / "sessions.db", ws))
    session_id = shared[0]["session_id"]
    _both_open_before_either_writes(home, tmp_path / "barrier", workers=2)
    printed = run_writers(home, [("a", ws, ("--continue",)), ("b", ws, ("--resume", session_id))], WRITE_SECONDS)
    assert len(list((tmp_path / "barrier").iterdir())) == 2  # both went through the barrier
    _assert_busy(printed)
    assert {ms[0]["session_id"] for ms in printed.values()} == {session_id}
    assert printed["a"][0]["parent_id"] == printed["b"][0]["parent_id"] == shared[-1]["id"]
    check_database(home / "sessions.db", {**printed, "seed": shared})


async def test_a_process_goes_on_from_the_head_it_opened(server, open_runtime):
    """Another process stores a message after this one opened the session: this one's next
    prompt still hangs off the head it opened (and showed), in a branch of its own."""
    server.add(text("one"), text("two"))
    first = await open_runtime()
    try:
        await first.submit(Prompt("first"))
        opened_head = (await first.history())[-1]
    finally:
        await first.close()
    runtime = await open_runtime(resume_id=first.session.id)
    try:
        other = await Store.open()
        try:
            session = await other.find_session(first.session.id)
            elsewhere = await other.append(session, Message(role="user", content="from another process"))
        finally:
            await other.close()
        await runtime.submit(Prompt("mine"))
        history = await runtime.history()
    finally:
        await runtime.close()
    mine = next(m for m in history if m.content == "mine")
    assert mine.parent_id == opened_head.id != elsewhere.id
    assert "from another process" not in [m.content for m in history]
    sent = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert sent == ["first", "mine"]
