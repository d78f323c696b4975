"""Interrupt latency: from `Runtime.interrupt()` (what Esc calls) to the turn being finished.

Runs a real `Runtime` (real litellm, SQLite, tools) against the scripted fake server in a
temporary CAIRN_HOME, and prints the median (and min/max) of N runs for:

- **streaming**: the model streams text (a chunk every 10 ms); interrupt after a few chunks.
  Finished = the partial answer is stored with status=interrupted and `run_turn` returned.
- **command**: the model runs `sh -c 'sleep 300 & sleep 300'` through `terminal-execute`;
  interrupt once both sleeps run. Finished = `run_turn` returned (the group is SIGKILLed and
  the call answered). Also timed: until no process of the group is left.
- **retry wait**: a 429 with `Retry-After: 300`; interrupt during the backoff sleep.

One warm-up run per case is not counted (litellm's first request, the first connection).
No tmux needed. Usage: python bench/interrupt.py [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Interrupt, Prompt

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TIMEOUT = 30.0
COMMAND = "echo $$ > {pgid}; sh -c 'sleep 300 & sleep 300'"


def _group_alive(pgid: int) -> bool:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _sleeps_running(pgid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                head, rest = f.read().rsplit(")", 1)
            fields = rest.split()
        except (OSError, ValueError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z" and head.endswith("(sleep"):
            count += 1
    return count


async def _until(predicate, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {TIMEOUT:.0f} s")
        await asyncio.sleep(0.005)


class Bench:
    def __init__(self, runtime, server, events: list, workspace: Path) -> None:
        self.runtime, self.server, self.events, self.workspace = runtime, server, events, workspace

    def _count(self, kind: str) -> int:
        return sum(1 for e in self.events if e.type == kind)

    async def _interrupt(self, turn: asyncio.Task) -> float:
        started = time.perf_counter()
        assert self.runtime.submit(Interrupt()).result(), "no turn was running"
        await asyncio.wait_for(turn, TIMEOUT)
        elapsed = time.perf_counter() - started
        last = [e for e in self.events if e.type == "turn_finished"][-1]
        assert last.status == "interrupted", last
        return elapsed

    async def streaming(self) -> dict[str, float]:
        from tests.fakes.llm_server import filler_text, text

        self.server.add(text(filler_text(20_000), chunk_size=6, delay=0.01))
        before = self._count("text_delta")
        turn = asyncio.ensure_future(self.runtime.submit(Prompt("stream for a while")))
        await _until(lambda: self._count("text_delta") >= before + 5, "streaming")
        elapsed = await self._interrupt(turn)
        last = (await self.runtime.history())[-1]
        assert last.role == "assistant" and last.status == "interrupted" and last.content
        self.server.wait_idle(TIMEOUT)
        return {"turn finished": elapsed}

    async def command(self, run: int) -> dict[str, float]:
        from tests.fakes.llm_server import tool_calls

        pgid_file = self.workspace / f"pgid-{run}"
        self.server.add(tool_calls([(f"c{run}", "terminal-execute", {"command": COMMAND.format(pgid=pgid_file)})]))
        turn = asyncio.ensure_future(self.runtime.submit(Prompt("run the sleepers")))
        await _until(lambda: pgid_file.exists() and pgid_file.read_text().strip(), "the command start")
        pgid = int(pgid_file.read_text())
        await _until(lambda: _sleeps_running(pgid) == 2, "both sleeps")
        started = time.perf_counter()
        elapsed = await self._interrupt(turn)
        await _until(lambda: not _group_alive(pgid), "the group's death")
        gone = time.perf_counter() - started
        return {"turn finished": elapsed, "group gone": gone}

    async def retry_wait(self) -> dict[str, float]:
        from tests.fakes.llm_server import rate_limited

        self.server.add(rate_limited(retry_after=300))
        before = self._count("retrying")
        turn = asyncio.ensure_future(self.runtime.submit(Prompt("hi")))
        await _until(lambda: self._count("retrying") > before, "the retry wait")
        return {"turn finished": await self._interrupt(turn)}


def _ms(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):7.1f} ms   (min {min(ms):.1f}, max {max(ms):.1f}, n={len(ms)})"


async def main(runs: int) -> None:
    from agent.runtime.runtime import Runtime
    from agent.settings.config import load_settings
    from tests.fakes.llm_server import FakeLLMServer

    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as tmp:
        os.environ["CAIRN_HOME"] = str(Path(tmp) / "home")
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        server = FakeLLMServer()
        settings = load_settings(
            workspace,
            flags={
                "model": "openai/fake-model",
                "api_base": server.base_url,
                "api_key": "sk-bench",
                "yolo": True,
                "llm": {"retry_max_delay": 600},
            },
        )
        events: list = []
        runtime = await Runtime.open(settings, FrontEnd(on_event=events.append))
        await runtime.ready()
        bench = Bench(runtime, server, events, workspace)
        results: dict[str, dict[str, list[float]]] = {}
        cases = {
            "streaming": lambda i: bench.streaming(),
            "command (sleep in sh -c)": bench.command,
            "retry wait (429, Retry-After 300)": lambda i: bench.retry_wait(),
        }
        try:
            for name, case in cases.items():
                await case(-1)  # warm-up
                for i in range(runs):
                    for key, value in (await case(i)).items():
                        results.setdefault(name, {}).setdefault(key, []).append(value)
        finally:
            await runtime.close()
            server.close()
    print(f"Interrupt → turn finished (Runtime.interrupt, fake server, {runs} runs each, {os.cpu_count()} CPUs)")
    for name, timings in results.items():
        for key, values in timings.items():
            print(f"  {name + ':':38} {key:14} {_ms(values)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
