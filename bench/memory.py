"""Memory after a long session: 500 turns through the Runtime, then the TUI showing it.

Three fresh processes, so each figure is that process alone (nothing the benchmark itself
allocated is counted), plus the fake server in a fourth (it keeps every request it got):

1. **runtime**: a real `Runtime` (litellm, SQLite, tools, yolo) runs 500 turns against the
   fake server. Every turn is a short prompt and a short streamed answer (~30 words); every
   5th turn the model first reads a file (`filesystem-read`), every 25th it also runs
   `echo` (`terminal-execute`). RSS (VmRSS) is read after turn 1 (everything imported,
   one request made) and every 100 turns, after `gc.collect()`; so is the number of
   objects the garbage collector tracks (what turns 2..500 left alive).
2. **tui, resumed**: `CairnApp` headless (Pilot, 120×36) `--resume`s that session; measured
   once the runtime is open and the last answer is in the chat.
3. **tui, empty**: the same app on a new session: the difference is what showing the long
   session costs.

RSS includes the interpreter and every imported library (litellm alone is ~100 MB). Not
tracemalloc: it made each turn ~5× slower and its own bookkeeping inflates RSS. SPEC §10
sets no memory target; the growth figures show whether something leaks per turn. Each
figure is one measurement (memory is not noisy the way time is). The mean turn time of the
first and the last 100 turns is reported too (it grows with the history). `--quick`: 20 turns.

Usage: python bench/memory.py [--turns 500] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from run import Row, at_most, common_args, finish  # noqa: E402

READY_TIMEOUT = 120.0
TOOL_EVERY, COMMAND_EVERY = 5, 25
_TURN = re.compile(r"turn (\d+):")
WORDS = [
    "the",
    "model",
    "answers",
    "briefly",
    "about",
    "files",
    "tests",
    "and",
    "the",
    "build",
    "while",
    "the",
    "user",
    "reads",
]


def rss_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


# -- the fake model (a process of its own) -----------------------------------------------------------
def respond(request: dict):
    """`turn N: …` → an answer, or first a tool call on every 5th turn; after a tool result: the answer."""
    from tests.fakes.llm_server import text, tool_calls

    messages = request.get("messages", [])
    last = messages[-1] if messages else {}
    users = [m for m in messages if m.get("role") == "user"]
    found = _TURN.findall(json.dumps(users[-1].get("content") if users else ""))
    n = int(found[-1]) if found else 0
    answer = f"Answer {n}: " + " ".join(WORDS[(n + k) % len(WORDS)] for k in range(30)) + "."
    if last.get("role") == "tool" or not found or n % TOOL_EVERY:
        return text(answer, chunk_size=12)
    calls = [(f"read_{n}", "filesystem-read", {"filePath": "notes.txt"})]
    if n % COMMAND_EVERY == 0:
        calls.append((f"echo_{n}", "terminal-execute", {"command": f"echo turn {n}"}))
    return tool_calls(calls, text="Let me look.")


def serve() -> int:
    from tests.fakes.llm_server import FakeLLMServer

    server = FakeLLMServer([respond], repeat=True)
    print(f"PORT={server.port}", flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin (or dies)
    finally:
        server.close()
    return 0


# -- children -----------------------------------------------------------------------------------------
def _settings(ws: Path, base_url: str):
    from agent.settings.config import load_settings

    return load_settings(
        ws, flags={"model": "openai/fake-model", "api_base": base_url, "api_key": "sk-bench", "yolo": True}
    )


async def child_runtime(ws: Path, base_url: str, turns: int) -> dict:
    from agent.runtime.runtime import Runtime

    events = {"turn_error": 0}

    def on_event(event) -> None:
        if event.type == "turn_error":
            events["turn_error"] += 1

    runtime = await Runtime.open(_settings(ws, base_url), FrontEnd(on_event=on_event))
    out: dict = {"session_id": runtime.session.id, "rss": {}, "turn_ms": {}, "turn_cpu_ms": {}}
    start = time.perf_counter()
    block_start, block_cpu, block_turns = 0.0, 0.0, 0
    try:
        await runtime.ready()
        for n in range(1, turns + 1):
            if n == 2 or (n - 1) % 100 == 0:
                block_start, block_cpu, block_turns = time.perf_counter(), time.process_time(), 0
            await runtime.submit(Prompt(f"turn {n}: please look at the notes and tell me what you think"))
            block_turns += 1
            if n == 1 or n % 100 == 0 or n == turns:
                if n > 1:  # mean turn time of this block (turn 1 pays litellm's first request)
                    out["turn_ms"][n] = (time.perf_counter() - block_start) / block_turns * 1000
                    # cairn's own time: the fake server (another process) parsing ever longer
                    # requests is in the wall time, not in this.
                    out["turn_cpu_ms"][n] = (time.process_time() - block_cpu) / block_turns * 1000
                gc.collect()
                out["rss"][n] = rss_mb()[0]
                out.setdefault("objects", {})[n] = len(gc.get_objects())
        out["messages"] = len(await runtime.history())
    finally:
        await runtime.close()
    out["rss_final"], out["rss_peak"] = rss_mb()
    out["seconds"] = time.perf_counter() - start
    out["turn_errors"] = events["turn_error"]
    return out


async def child_tui(ws: Path, base_url: str, resume_id: str | None) -> dict:
    from agent.ui.app import CairnApp

    class MemoryApp(CairnApp):
        CSS_PATH = str(REPO / "agent" / "ui" / "app.tcss")

    app = MemoryApp(_settings(ws, base_url), resume_id=resume_id)
    async with app.run_test(size=(120, 36)) as pilot:
        deadline = time.monotonic() + READY_TIMEOUT
        while app.runtime is None or (resume_id and not app.chat.assistant_messages):
            if app._exception or app.open_error or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not open: {app.open_error or app._exception or 'timed out'}")
            await asyncio.sleep(0.05)
        await app.runtime.ready()
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        gc.collect()
        rss, peak = rss_mb()
        objects = len(gc.get_objects())
        shown = len(app.chat.children)
    return {"rss": rss, "rss_peak": peak, "objects": objects, "widgets": shown}


# -- the benchmark ------------------------------------------------------------------------------------
def _child(args: list[str], env: dict, timeout: float) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"memory child {args[:2]} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(turns: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-memory-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        (ws / "notes.txt").write_text(
            "".join(f"note {i}: remember to run the tests before a release\n" for i in range(40))
        )
        env = dict(os.environ, CAIRN_HOME=str(Path(tmp, "home")), PYTHONUNBUFFERED="1")
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = server.stdout.readline().strip()
            if not line.startswith("PORT="):
                raise RuntimeError(f"fake server did not start: {line!r}")
            base_url = f"http://127.0.0.1:{int(line.split('=', 1)[1])}/v1"
            common = ["--ws", str(ws), "--base-url", base_url]
            runtime = _child(["--child", "runtime", "--turns", str(turns), *common], env, 60 + turns * 2)
            print(
                f"runtime: {turns} turns ({runtime['messages']} messages, {runtime['turn_errors']} turn errors) "
                f"in {runtime['seconds']:.1f} s; RSS by turn: "
                + ", ".join(f"{k}: {v:.0f} MB" for k, v in runtime["rss"].items())
                + f"; peak {runtime['rss_peak']:.0f} MB; gc-tracked objects by turn: "
                + ", ".join(f"{k}: {v:,}" for k, v in runtime["objects"].items())
                + "; mean turn ms by block: "
                + ", ".join(f"…{k}: {v:.0f}" for k, v in runtime["turn_ms"].items()),
                flush=True,
            )
            resumed = _child(["--child", "tui", "--resume", runtime["session_id"], *common], env, 180)
            empty = _child(["--child", "tui", *common], env, 180)
            for label, got in (("tui, resumed", resumed), ("tui, empty", empty)):
                print(
                    f"{label}: RSS {got['rss']:.0f} MB (peak {got['rss_peak']:.0f}), "
                    f"{got['objects']:,} gc-tracked objects, {got['widgets']} chat widgets",
                    flush=True,
                )
        finally:
            server.stdin.close()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
    return {"runtime": runtime, "resumed": resumed, "empty": empty}


def run(quick: bool = False, *, turns: int = 500) -> list[Row]:
    turns = 20 if quick else turns
    got = measure(turns)
    runtime, resumed, empty = got["runtime"], got["resumed"], got["empty"]
    rss = {int(k): v for k, v in runtime["rss"].items()}
    objects = {int(k): v for k, v in runtime["objects"].items()}
    last = max(rss)
    per_100 = (rss[last] - rss[1]) / max(1, last - 1) * 100
    objects_per_turn = (objects[last] - objects[1]) / max(1, last - 1)
    turn_ms = {int(k): v for k, v in runtime["turn_ms"].items()}
    turn_cpu = {int(k): v for k, v in runtime["turn_cpu_ms"].items()}
    first_block, last_block = min(turn_ms), max(turn_ms)
    if runtime["turn_errors"]:
        raise RuntimeError(f"{runtime['turn_errors']} turns ended in an error")
    later = (
        []
        if last_block == first_block
        else [
            Row(
                "memory",
                f"runtime mean turn time, turns {max(2, last_block - 99)}–{last_block}",
                turn_ms[last_block],
                note="grows with the history: every request is re-serialised",
            ),
            Row("memory", f"  … its CPU in cairn's process, turns 2–{first_block}", turn_cpu[first_block]),
            Row(
                "memory",
                f"  … its CPU in cairn's process, turns {max(2, last_block - 99)}–{last_block}",
                turn_cpu[last_block],
            ),
            Row(
                "memory",
                "  … turn time, last 100 turns / turns 2–100 (issue 33)",
                turn_ms[last_block] / turn_ms[first_block],
                unit="×",
                target="≤ 2×",
                ok=at_most(turn_ms[last_block] / turn_ms[first_block], 2.0, quick),
                note=f"CPU: {turn_cpu[last_block] / turn_cpu[first_block]:.2f}×",
            ),
        ]
    )
    return [
        Row("memory", f"runtime RSS after {turns} turns ({runtime['messages']:,} msgs)", rss[last], unit="MB"),
        Row("memory", f"runtime RSS growth per 100 turns (turn 1 → {last})", per_100, unit="MB"),
        Row("memory", f"runtime objects kept per turn (gc-tracked, turn 1 → {last})", objects_per_turn, unit="objects"),
        Row("memory", f"runtime mean turn time, turns 2–{first_block}", turn_ms[first_block]),
        *later,
        Row(
            "memory",
            f"TUI RSS showing that session (--resume, {resumed['widgets']} chat widgets)",
            resumed["rss"],
            unit="MB",
        ),
        Row(
            "memory",
            "TUI RSS, that session minus an empty one",
            resumed["rss"] - empty["rss"],
            unit="MB",
            note=f"empty: {empty['rss']:.0f} MB",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    common_args(parser)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", choices=["runtime", "tui"], help=argparse.SUPPRESS)
    parser.add_argument("--ws", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--resume", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve()
    if args.child == "runtime":
        print(json.dumps(asyncio.run(child_runtime(Path(args.ws), args.base_url, args.turns))))
        return 0
    if args.child == "tui":
        print(json.dumps(asyncio.run(child_tui(Path(args.ws), args.base_url, args.resume))))
        return 0
    return finish(run(args.quick, turns=args.turns), args.json)


if __name__ == "__main__":
    sys.exit(main())
