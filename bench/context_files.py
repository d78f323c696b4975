"""Context files over large artifacts (seed 004): build, read at an offset, tail, grep.

Each size is a real terminal result stored in SQLite (a log of ~120-byte lines with a few
"FATAL" lines), reached through `ContextFiles` exactly as the context-* tools reach it.
Prints medians of several runs:

- build: the first access after eviction (message from SQLite → log file on disk);
- read: a 64 KiB page from the middle; tail: the last 200 lines;
- grep rare / common: a pattern on 3 lines, and one on every line (50 shown, all counted),
  2 context lines, with ripgrep and with the RE2 fallback ("t/o": over the 5 s time limit,
  which the tool reports as "grep timed out … narrow the pattern");
- peak: the largest Python heap (tracemalloc) during read + tail + grep, in MB.

    python bench/context_files.py [--sizes 1 50 200] [--runs 5] [--quick] [--json FILE]

The suite's rows: build and rare grep (rg) per size, everything at the largest size.
SPEC §10 sets no target here. `--quick`: 1 MB, one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import Row, common_args, finish  # noqa: E402

from agent.context.files import grep as grepping  # noqa: E402
from agent.context.files.manager import ContextFileError, ContextFiles  # noqa: E402
from agent.context.files.refs import artifact_ref_id  # noqa: E402
from agent.session.models import Message, ToolCall  # noqa: E402
from agent.session.store import Store  # noqa: E402
from agent.settings.schema import ContextSettings  # noqa: E402

LINE = "2024-05-01T12:00:00.000Z INFO worker-{:07d} request served in 12 ms status=200 path=/api/v1/items\n"


def make_stdout(megabytes: int) -> str:
    target = megabytes * 1024 * 1024
    n = target // len(LINE.format(0))
    lines = [LINE.format(i) for i in range(n)]
    for at in (n // 4, n // 2, n - 10):
        lines[at] = f"2024-05-01T12:00:00.000Z FATAL worker-{at:07d} disk full on /var/data\n"
    return "".join(lines)


async def median_ms(runs: int, make) -> float | str:
    """Median ms of `runs` calls; "t/o" when the median run is over the grep time limit."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            await make()
        except ContextFileError:  # grep over its time limit (close to it, runs differ)
            times.append(float("inf"))
            continue
        times.append(time.perf_counter() - start)
    value = statistics.median(times)
    return "t/o" if value == float("inf") else value * 1000


async def measure(store: Store, root: Path, megabytes: int, runs: int) -> dict:
    session = await store.create_session(cwd="/bench")
    call = ToolCall(id="call_bench", name="terminal-execute", arguments=json.dumps({"command": "cat big.log"}))
    await store.append(session, Message(role="assistant", tool_calls=[call]))
    stdout = make_stdout(megabytes)
    content = json.dumps({"command": "cat big.log", "stdout": stdout, "stderr": "", "exitCode": 0})
    message = await store.append(
        session, Message(role="tool", tool_call_id=call.id, tool_name=call.name, content=content)
    )
    del stdout, content
    settings = ContextSettings()
    files = ContextFiles(store, session.id, settings=settings, root=root)
    ref = artifact_ref_id(message.id)
    [listed] = await files.list(kind="artifact")
    size = listed.byteSize or 0

    async def build():
        settings.files_cache_max_bytes = 0
        await files.evict()
        settings.files_cache_max_bytes = 1024**3
        await files.read(ref, 0, 16)

    out = {"mb": size / 2**20, "build": await median_ms(min(runs, 3), build)}
    out["read"] = await median_ms(runs, lambda: files.read(ref, size // 2 + 1, 65_536))
    out["tail"] = await median_ms(runs, lambda: files.tail(ref, 200))
    real_find_rg = grepping.find_rg
    for engine in ("rg", "re2"):
        grepping.find_rg = real_find_rg if engine == "rg" else (lambda: None)
        for name, pattern, expect in (("rare", r"fatal \S+ disk", 3), ("common", r"status=200", None)):
            try:
                found = await files.grep(ref, pattern, context_lines=2)
            except ContextFileError as exc:  # over the time limit (the RE2 fallback on big files)
                out[f"{name}_{engine}"] = f"t/o ({exc})"[:3]
                continue
            assert expect is None or found.totalMatches == expect, found.totalMatches
            out[f"{name}_{engine}"] = await median_ms(runs, lambda p=pattern: files.grep(ref, p, context_lines=2))
    grepping.find_rg = real_find_rg
    tracemalloc.start()
    await files.read(ref, size // 2 + 1, 65_536)
    await files.tail(ref, 2000)
    await files.grep(ref, r"fatal", context_lines=5)
    grepping.find_rg = lambda: None
    await files.grep(ref, r"fatal", context_lines=5)
    grepping.find_rg = real_find_rg
    out["peak"] = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    await store.delete_session(session.id)
    return out


async def measure_sizes(sizes: list[int], runs: int) -> list[dict]:
    print(f"rg: {grepping.find_rg()}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await Store.open(Path(tmp) / "bench.db")
        try:
            print(
                f"{'MB':>6} {'build':>8} {'read':>7} {'tail':>7} {'rare rg':>8} {'rare re2':>9} "
                f"{'common rg':>10} {'common re2':>11} {'peak MB':>8}   (median ms)"
            )
            for mb in sizes:
                r = await measure(store, Path(tmp) / "context", mb, runs)
                results.append(r)
                g = {k: v if isinstance(v, str) else f"{v:.1f}" for k, v in r.items()}
                print(
                    f"{r['mb']:>6.1f} {r['build']:>8.1f} {r['read']:>7.2f} {r['tail']:>7.2f} {g['rare_rg']:>8} "
                    f"{g['rare_re2']:>9} {g['common_rg']:>10} {g['common_re2']:>11} {r['peak']:>8.2f}"
                )
        finally:
            await store.close()
    print(f"grep time limit: {ContextSettings().files_grep_timeout:g} s; cpus: {os.cpu_count()}")
    return results


def run(quick: bool = False, *, sizes: list[int] | None = None, runs: int = 5) -> list[Row]:
    sizes = [1] if quick else sizes or [1, 50, 200]
    runs = 1 if quick else runs
    results = asyncio.run(measure_sizes(sizes, runs))

    def row(r: dict, figure: str, key: str, unit: str = "ms") -> Row:
        value = r[key]
        label = f"{figure}, {r['mb']:.0f} MB"
        if isinstance(value, str):  # "t/o": over the grep time limit
            return Row("context_files", label, None, note=f"timed out (> {ContextSettings().files_grep_timeout:g} s)")
        return Row("context_files", label, value, unit=unit)

    rows = []
    for r in results[:-1]:
        rows += [row(r, "build (first access)", "build"), row(r, "grep rare (rg)", "rare_rg")]
    last = results[-1]
    rows += [
        row(last, "build (first access)", "build"),
        row(last, "read 64 KiB mid-file", "read"),
        row(last, "tail 200 lines", "tail"),
        row(last, "grep rare (rg)", "rare_rg"),
        row(last, "grep common (rg)", "common_rg"),
        row(last, "grep rare (RE2 fallback)", "rare_re2"),
        row(last, "grep common (RE2 fallback)", "common_re2"),
        row(last, "peak heap, read+tail+grep", "peak", "MB"),
    ]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 50, 200], help="megabytes")
    parser.add_argument("--runs", type=int, default=5)
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, sizes=args.sizes, runs=args.runs), args.json)


if __name__ == "__main__":
    sys.exit(main())
