"""kill -9 anywhere: 50+ seeded kill points across streaming, tools, condensing and rewinding.

Two lanes (threads) share one CAIRN_HOME, so one database; each has its own fake LLM
server (a router step that answers from the request) and a workspace per kind of kill:

- stream:   `cairn -p` while a long answer streams;
- terminal: while `terminal-execute` runs, its result is stored, or the next answer streams;
- edit:     while `filesystem-edit` changes a file, its checkpoint is stored, or after;
- condense: `cairn --continue -p /compact` while the summary streams or is stored;
- rewind:   a Runtime-API driver rewinding with file restore (up to 4 files, a pause before
            each via the test-only CAIRN_TEST_RESTORE_PAUSE), killed mid-restore.

Each kill waits for its phase (the request reached the server, or the driver said "go"),
sleeps a seeded random delay, snapshots every stored row and SIGKILLs the process group.
Then: `PRAGMA integrity_check` passes; every row of the snapshot is still stored (same
place in the tree, its text at least what was seen); every message the run printed is
stored; `cairn --continue -p next` exits 0 with a clean stderr and a valid request; an
edited file holds its old or its new bytes; a rewind is either not begun (files and head
as they were) or finished (files restored, head moved: the journal was rolled forward),
never in between, with no journal or temp file left.

Runs are forks of a "zygote" that imported cairn and litellm once and warmed them with one
real run (a fresh `cairn` pays seconds of imports and first-request costs; 100+ of them
would take many minutes); the child runs `agent.cli.main`, what the console script calls.
The last check goes through the installed console script itself. CAIRN_KILL9_CONSOLE=1
runs everything through it (slow); CAIRN_KILL9_SEED replays another set of kill points.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent.session.restore_journal import PAUSE_ENV, PREFIX
from tests.fakes.llm_server import FakeLLMServer, filler_text, text, tool_calls
from tests.session.test_kill9 import _assert_valid_request

CAIRN = Path(sys.executable).parent / "cairn"
REPO = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("CAIRN_KILL9_SEED", "20250917"))
CONSOLE = os.environ.get("CAIRN_KILL9_CONSOLE") == "1"
PER_LANE = {"stream": 6, "terminal": 5, "edit": 5, "condense": 5, "rewind": 6}  # x2 lanes = 54
PAUSE = 0.05  # before each restored file
DEADLINE = 90.0
POLL = 0.01
MODEL = ["--model", "openai/fake-model", "--api-key", "sk-test", "--yolo"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv"),
]

# Imports cairn and litellm once (and warms them with a real run), then forks a child per
# request line: the child becomes its own process group, gets its stdio and environment,
# and runs `agent.cli.main(argv)` (or the rewind driver). Replies: the child's pid; for
# "reap", finished children's exit codes.
ZYGOTE = r"""
import asyncio, json, os, sys, tempfile, threading, time, traceback
import agent.cli
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
reply = os.fdopen(os.dup(1), "w")
saved_err = os.dup(2)
null = os.open(os.devnull, os.O_WRONLY)
os.dup2(null, 1)
os.dup2(null, 2)
# `cairn -p` reads piped stdin; the zygote's is the command pipe, not for the warm-up runs.
saved_in = os.dup(0)
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
# One real turn and one /compact here, so no child pays the first request's imports.
try:
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer([
        tool_calls([("w1", "terminal-execute", {"command": "echo warm"}),
                    ("w2", "filesystem-edit", {"filePath": "f.txt", "searchContent": "x = 1",
                                               "replaceContent": "x = 2"})]),
        text("warm"), text("summary"),
    ]) as srv:
        os.environ["CAIRN_HOME"] = tmp
        os.mkdir(os.path.join(tmp, "ws"))
        with open(os.path.join(tmp, "ws", "f.txt"), "w") as f:
            f.write("x = 1\n")
        base = ["--model", "openai/fake-model", "--api-base", srv.base_url, "--api-key", "k", "--yolo",
                "--cwd", os.path.join(tmp, "ws"), "--output-format", "json"]
        assert agent.cli.main(["-p", "warm", *base]) == 0, "warm-up turn failed"
        assert agent.cli.main(["-p", "/compact", "--continue", *base]) == 0, "warm-up /compact failed"
finally:
    os.dup2(saved_err, 2)
    os.dup2(saved_in, 0)
del os.environ["CAIRN_HOME"]
deadline = time.monotonic() + 10
while threading.active_count() > 1 and time.monotonic() < deadline:  # forking with threads is unsafe
    time.sleep(0.05)
assert threading.active_count() == 1, threading.enumerate()
sys.stdout.flush(); sys.stderr.flush()  # nothing buffered may leak into a child's output
print("ready", file=reply, flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["op"] == "reap":
        done = {}
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            done[pid] = os.waitstatus_to_exitcode(status)
        print(json.dumps(done), file=reply, flush=True)
        continue
    pid = os.fork()
    if pid:
        print(pid, file=reply, flush=True)
        continue
    code = 1
    try:
        os.setsid()
        reply.close()
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, cmd["stdout"], os.O_WRONLY | os.O_CREAT),
                                (2, cmd["stderr"], os.O_WRONLY | os.O_CREAT)):
            os.dup2(os.open(path, flags), fd)
        os.environ.update(cmd["env"])
        if cmd.get("driver"):
            scope = {}
            exec(cmd["driver"], scope)
            asyncio.run(scope["main"](cmd["args"]))
            code = 0
        else:
            code = agent.cli.main(cmd["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(code)
"""

# The rewind a user does in the TUI (ESC ESC, "conversation and files"), through the Runtime API.
DRIVER = r"""
import asyncio, json, sys
from pathlib import Path

async def main(args):
    from agent.settings.config import load_settings
    from agent.runtime.opening import FrontEnd
    from agent.runtime.ops import Rewind, SwitchBranch
    from agent.runtime.runtime import Runtime
    ws = Path(args["workspace"])
    settings = load_settings(ws, flags={"model": "openai/fake-model", "api_base": args["api_base"],
                                        "api_key": "sk-test", "yolo": True})
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda e: None), continue_last=True, warm_up=False)
    await runtime.submit(SwitchBranch(args["leaf"]))  # back to the tip, files as the agent left them
    for name, content in args["files"].items():
        (ws / name).write_text(content)
    print("go", flush=True)
    outcome = await runtime.submit(Rewind(args["target"], restore_files=True))
    print("done", outcome.model_dump_json(), flush=True)
    await asyncio.sleep(120)  # the kill always finds it alive
"""
DRIVER_MAIN = "\nimport asyncio, json, sys\nasyncio.run(main(json.loads(sys.argv[1])))\n"


# -- launching -----------------------------------------------------------------------------
class Zygote:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        self.lock = threading.Lock()
        self.codes: dict[int, int] = {}
        self.pids: set[int] = set()
        assert self.proc.stdout.readline().strip() == "ready", "the zygote did not start"

    def _ask(self, cmd: dict) -> str:
        with self.lock:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
            return self.proc.stdout.readline()

    def spawn(self, out: Path, err: Path, env: dict, argv: list[str] | None = None, driver: dict | None = None) -> int:
        cmd = {"op": "spawn", "stdout": str(out), "stderr": str(err), "env": env, "argv": argv}
        if driver is not None:
            cmd.update(driver=DRIVER, args=driver)
        pid = int(self._ask(cmd))
        self.pids.add(pid)
        return pid

    def poll(self, pid: int) -> int | None:
        if pid not in self.codes:
            self.codes.update({int(k): v for k, v in json.loads(self._ask({"op": "reap"})).items()})
        return self.codes.get(pid)

    def close(self) -> None:
        _kill_leftovers(self.pids - set(self.codes))
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Console:
    """Every run through the installed console script (CAIRN_KILL9_CONSOLE=1)."""

    def __init__(self) -> None:
        self.procs: dict[int, subprocess.Popen] = {}

    def spawn(self, out: Path, err: Path, env: dict, argv: list[str] | None = None, driver: dict | None = None) -> int:
        args = [sys.executable, "-c", DRIVER + DRIVER_MAIN, json.dumps(driver)] if driver else [str(CAIRN), *argv]
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = subprocess.Popen(
                args, stdout=o, stderr=e, stdin=subprocess.DEVNULL, env={**os.environ, **env}, start_new_session=True
            )
        self.procs[proc.pid] = proc
        return proc.pid

    def poll(self, pid: int) -> int | None:
        return self.procs[pid].poll()

    def close(self) -> None:
        _kill_leftovers({pid for pid, proc in self.procs.items() if proc.poll() is None})


def _kill_leftovers(pids: set[int]) -> None:
    """After a failure: the runs this test started and did not see end (their own groups)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


class Run:
    def __init__(self, launcher, pid: int, out: Path, err: Path) -> None:
        self.launcher, self.pid, self.out, self.err = launcher, pid, out, err

    def poll(self) -> int | None:
        return self.launcher.poll(self.pid)

    def wait(self) -> int:
        deadline = time.monotonic() + DEADLINE
        while (code := self.poll()) is None:
            assert time.monotonic() < deadline, f"run {self.pid} did not finish"
            time.sleep(POLL)
        return code

    def kill9(self) -> bool:
        """True when the kill landed (False: it had already finished by itself)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        return self.wait() == -signal.SIGKILL

    def printed(self) -> list[dict]:
        """The messages the run reported as stored: stream-json's `user` and `assistant` lines,
        each printed once it is stored (so a killed run's are there too)."""
        lines = [json.loads(line) for line in self.out.read_text().splitlines() if line.startswith("{")]
        session = next((e["session_id"] for e in lines if e.get("type") == "session"), None)
        return [
            {
                "id": e["message_id"],
                "session_id": session,
                "parent_id": e["parent_id"],
                "role": e["type"],
                "content": e["text"],
            }
            for e in lines
            if e.get("type") in ("user", "assistant")
        ]


# -- the database, read-only -----------------------------------------------------------------
def _query(db: Path, sql: str) -> list[dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def _rows(db: Path) -> dict[str, dict]:
    return {r["id"]: r for r in _query(db, "SELECT * FROM messages")}


IDENTITY = ("session_id", "parent_id", "seq", "role", "kind", "tool_call_id", "created_at")


def _assert_kept(before: dict[str, dict], after: dict[str, dict], *, exact: bool, where: str) -> None:
    for mid, row in before.items():
        now = after.get(mid)
        assert now is not None, f"{where}: message {mid} ({row['role']}) seen before the kill is gone"
        assert all(now[k] == row[k] for k in IDENTITY), f"{where}: message {mid} moved: {row} -> {now}"
        if exact:
            assert now["content"] == row["content"], f"{where}: message {mid} changed"
        else:  # a streaming row may have been flushed once more between the snapshot and the kill
            assert (now["content"] or "").startswith(row["content"] or ""), f"{where}: text of {mid} lost"


def _turn_step(request: dict) -> int:
    """How many model answers this turn already has (0: the first request of the turn)."""
    messages = request["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return sum(m["role"] == "assistant" for m in messages[last_user:])


# -- one lane: its server, workspaces and kill points --------------------------------------------
class Lane:
    def __init__(self, index: int, launcher, home: Path, root: Path) -> None:
        self.index, self.launcher, self.home, self.root = index, launcher, home, root
        self.rng = random.Random(SEED * 10 + index)
        self.db = home / "sessions.db"
        self.respond = lambda request: text("ok")
        self.requests, self.last_request = 0, {}
        self.server = FakeLLMServer([self._route], repeat=True)
        self.runs = 0
        self.kills: list[str] = []
        self.seen = {"partial_stream": 0, "journal_left": 0, "half_restored": 0, "rolled_forward": 0}
        self.ws = {kind: root / f"lane{index}-{kind}" for kind in PER_LANE}
        for path in self.ws.values():
            path.mkdir(parents=True)

    def _route(self, request: dict):
        step = self.respond(request)  # first: the phase starts once the answer is decided
        self.requests, self.last_request = self.requests + 1, request
        return step

    def start(self, kind: str, prompt: str, *, env: dict | None = None, driver: dict | None = None) -> Run:
        self.runs += 1
        out, err = self.root / f"lane{self.index}-{self.runs}.out", self.root / f"lane{self.index}-{self.runs}.err"
        argv = [
            "-p",
            prompt,
            *MODEL,
            "--api-base",
            self.server.base_url,
            "--cwd",
            str(self.ws[kind]),
            "--output-format",
            "stream-json",
            "--continue",
        ]
        pid = self.launcher.spawn(
            out, err, {"CAIRN_HOME": str(self.home), **(env or {})}, argv=None if driver else argv, driver=driver
        )
        return Run(self.launcher, pid, out, err)

    def run_ok(self, kind: str, prompt: str, where: str) -> list[dict]:
        run = self.start(kind, prompt)
        code, err = run.wait(), run.err.read_text()
        assert code == 0 and not any(w in err for w in ("Error", "Traceback", "locked")), f"{where}: {code} {err}"
        return run.printed()

    def kill_at(self, run: Run, ready, window: float, where: str) -> tuple[dict, dict] | None:
        """Wait for the phase, a seeded delay, snapshot, SIGKILL. None if the run ended first."""
        deadline = time.monotonic() + DEADLINE
        while not ready():
            assert run.poll() is None, f"{where}: exited before its phase: {run.err.read_text()}"
            assert time.monotonic() < deadline, f"{where}: phase never reached"
            time.sleep(POLL)
        time.sleep(self.rng.uniform(0, window))
        before = _rows(self.db)
        if not run.kill9():
            return None
        after = _rows(self.db)
        assert _query(self.db, "PRAGMA integrity_check")[0]["integrity_check"] == "ok", where
        _assert_kept(before, after, exact=False, where=where)
        for message in run.printed():  # printed means stored: exactly as printed
            row = after.get(message["id"])
            assert row and (row["content"] or "") == message["content"], where
            assert row["parent_id"] == message["parent_id"], where
        return before, after

    def verify_next(self, kind: str, after: dict, where: str) -> dict:
        self.respond = lambda request: text("Resumed fine.")
        printed = self.run_ok(kind, "next", where)
        assert [m["role"] for m in printed] == ["user", "assistant"], where
        _assert_valid_request(self.last_request["messages"])  # orphans left out, pairs whole
        final = _rows(self.db)
        user = final[printed[0]["id"]]
        # Resuming changes no stored text (the other lane's rows may still be streaming).
        mine = {k: r for k, r in after.items() if r["session_id"] == user["session_id"]}
        _assert_kept(mine, final, exact=True, where=where)
        assert user["parent_id"] is None or user["parent_id"] in final, where
        return user

    # -- the kinds of kill point ----------------------------------------------------------------
    def kill_once(self, kind: str, n: int) -> bool:
        where = f"seed {SEED} lane {self.index} {kind} #{n}"
        if kind == "rewind":
            return self._rewind(where)
        sent = self.requests
        answer = filler_text(300)  # ~3 s of streaming: the process is alive when the kill comes
        edit: dict = {}
        if kind == "stream":
            self.respond = lambda request: text(answer, chunk_size=6, delay=0.01)
        elif kind == "terminal":
            call = tool_calls([(f"t{n}", "terminal-execute", {"command": f"sleep 0.4; echo run {n}"})], text="Run.")
            self.respond = lambda request: call if _turn_step(request) == 0 else text(answer, 6, 0.01)
        elif kind == "edit":
            counter = self.ws["edit"] / "counter.txt"

            def respond(request):
                if _turn_step(request):
                    return text(answer, 6, 0.01)
                edit["before"] = counter.read_text()
                edit["after"] = f"count = {int(edit['before'].split()[-1]) + 1}\n"
                return tool_calls(
                    [
                        (
                            f"e{n}",
                            "filesystem-edit",
                            {
                                "filePath": "counter.txt",
                                "searchContent": edit["before"].strip(),
                                "replaceContent": edit["after"].strip(),
                            },
                        )
                    ]
                )

            self.respond = respond
        else:  # condense: the summary request carries no tools
            self.respond = lambda request: text("ok") if request.get("tools") else text(filler_text(120), 6, 0.01)
        run = self.start(kind, "/compact" if kind == "condense" else f"{kind} {n}")
        window = {"stream": 1.2, "terminal": 1.0, "edit": 0.6, "condense": 1.3}[kind]
        kept = self.kill_at(run, lambda: self.requests > sent, window, where)
        if kept is None:
            return False
        before, after = kept
        if kind == "stream" and any(
            r["role"] == "assistant" and r["content"] and r["status"] == "interrupted" for r in before.values()
        ):
            self.seen["partial_stream"] += 1
        if kind == "edit":
            assert (self.ws["edit"] / "counter.txt").read_text() in (edit["before"], edit["after"]), where
        self.verify_next(kind, after, where)
        return True

    def setup(self) -> None:
        (self.ws["edit"] / "counter.txt").write_text("count = 0\n")
        self.run_ok("condense", "hello", "condense setup")
        ws = self.ws["rewind"]
        (ws / "b.txt").write_text("b0\n")
        (ws / "c.txt").write_text("c0\n")

        def edit(name, old, new):
            return (new, "filesystem-edit", {"filePath": name, "searchContent": old, "replaceContent": new})

        def create(name, content):
            return (content, "filesystem-create", {"filePath": name, "content": content + "\n"})

        turns = {
            "turn one": [tool_calls([create("a.txt", "a1"), edit("b.txt", "b0", "b1")]), text("one done")],
            "turn two": [
                tool_calls([edit("c.txt", "c0", "c2"), edit("b.txt", "b1", "b2"), create("d.txt", "d2")]),
                text("two done"),
            ],
        }
        users = {}
        for prompt, steps in turns.items():
            self.respond = lambda request, steps=steps: steps[min(_turn_step(request), len(steps) - 1)]
            users[prompt] = self.run_ok("rewind", prompt, "rewind setup")[0]
        self.session = users["turn one"]["session_id"]
        [session] = _query(self.db, f"SELECT * FROM sessions WHERE id = '{self.session}'")
        self.leaf = session["head_id"]
        self.tip = {n: (ws / n).read_text() for n in ("a.txt", "b.txt", "c.txt", "d.txt")}
        assert self.tip == {"a.txt": "a1\n", "b.txt": "b2\n", "c.txt": "c2\n", "d.txt": "d2\n"}
        self.targets = [  # (user turn to rewind to, files after the restore, head after it)
            (users["turn one"]["id"], {"a.txt": None, "b.txt": "b0\n", "c.txt": "c0\n", "d.txt": None}, None),
            (
                users["turn two"]["id"],
                {"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c0\n", "d.txt": None},
                users["turn two"]["parent_id"],
            ),
        ]

    def _files(self) -> dict:
        ws = self.ws["rewind"]
        return {n: (ws / n).read_text() if (ws / n).exists() else None for n in self.tip}

    def _journals(self) -> list[Path]:
        return list(self.home.glob(f"{PREFIX}{self.session}-*"))

    def _rewind(self, where: str) -> bool:
        target, restored, to_head = self.rng.choice(self.targets)
        args = {
            "workspace": str(self.ws["rewind"]),
            "api_base": self.server.base_url,
            "leaf": self.leaf,
            "target": target,
            "files": self.tip,
        }
        run = self.start("rewind", "", env={PAUSE_ENV: str(PAUSE)}, driver=args)
        kept = self.kill_at(run, lambda: run.out.exists() and "go" in run.out.read_text(), 5.5 * PAUSE, where)
        if kept is None:
            return False
        files = self._files()
        if self._journals():
            self.seen["journal_left"] += 1
        if files not in (self.tip, restored):
            self.seen["half_restored"] += 1
        user = self.verify_next("rewind", kept[1], where)  # its Runtime.open rolls the journal forward
        files = self._files()
        assert files in (self.tip, restored), f"{where}: restore left half done: {files}"
        rolled = files == restored
        self.seen["rolled_forward"] += rolled
        assert user["parent_id"] == (to_head if rolled else self.leaf), f"{where}: files and head disagree"
        assert not self._journals(), f"{where}: journal left"
        assert not list(self.ws["rewind"].glob(".*.cairn-restore")), f"{where}: temp file left"
        return True

    def work(self) -> None:
        self.setup()
        plan = [kind for kind, count in PER_LANE.items() for _ in range(count)]
        self.rng.shuffle(plan)
        for n, kind in enumerate(plan):
            for _attempt in range(5):  # a condense may finish before its kill: draw another point
                if self.kill_once(kind, n):
                    self.kills.append(kind)
                    break


def test_kill9_at_random_points_loses_nothing_and_resumes(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    launcher = Console() if CONSOLE else Zygote()
    lanes = [Lane(i, launcher, home, tmp_path) for i in range(2)]
    try:
        with ThreadPoolExecutor(len(lanes)) as pool:
            for future in [pool.submit(lane.work) for lane in lanes]:
                future.result()
        kills = [k for lane in lanes for k in lane.kills]
        assert len(kills) >= 50 and set(kills) == set(PER_LANE), kills
        seen = {key: sum(lane.seen[key] for lane in lanes) for key in lanes[0].seen}
        # The harness proves something only if kills landed inside the risky windows.
        assert all(seen.values()), seen
        # Finally the installed console script itself resumes a session that took kills.
        lane = lanes[0]
        lane.respond = lambda request: text("Console fine.")
        out = subprocess.run(
            [
                str(CAIRN),
                "-p",
                "next",
                *MODEL,
                "--api-base",
                lane.server.base_url,
                "--cwd",
                str(lane.ws["stream"]),
                "--continue",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "CAIRN_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert out.returncode == 0 and out.stdout == "Console fine.\n", out.stderr
        assert _query(lane.db, "PRAGMA integrity_check")[0]["integrity_check"] == "ok"
    finally:
        for lane in lanes:
            lane.server.close()
        launcher.close()
