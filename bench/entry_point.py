"""What `./cairn` adds before cairn starts (issue 34: within 50 ms of `.venv/bin/cairn`).

`./cairn` checks that .venv matches requirements.lock (scripts/bootstrap.sh: two file tests
on the usual run) and then execs the venv's console script. Both are run the same number
of times, interleaved, after one uncounted run each; the figure is the difference of the
medians of `--version` (process start to exit).

    python bench/entry_point.py [--runs 21] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Row, at_most, common_args, finish, median  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGET_MS = 50.0


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def run(quick: bool = False, *, runs: int = 21) -> list[Row]:
    wrapper, venv = [str(REPO / "cairn"), "--version"], [str(REPO / ".venv" / "bin" / "cairn"), "--version"]
    if not (REPO / ".venv" / "bin" / "cairn").exists():
        return [Row("entry_point", "./cairn --version overhead", None, note="skipped: no .venv (run ./cairn once)")]
    _time(wrapper)  # sets .venv up if the lock changed: not part of the figure
    _time(venv)
    n = 2 if quick else runs
    times: dict[str, list[float]] = {"wrapper": [], "venv": []}
    for _ in range(n):
        times["wrapper"].append(_time(wrapper))
        times["venv"].append(_time(venv))
    base, total = median(times["venv"]), median(times["wrapper"])
    print(f"  .venv/bin/cairn --version {base:6.1f} ms   ./cairn --version {total:6.1f} ms")
    return [
        Row(
            "entry_point",
            "./cairn --version − .venv/bin/cairn --version",
            total - base,
            target=f"≤ {TARGET_MS:g} ms",
            ok=at_most(total - base, TARGET_MS, quick),
            note=f".venv/bin/cairn {base:.1f} ms, ./cairn {total:.1f} ms, n={n}",
            runs=times["wrapper"],
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, runs=args.runs), args.json)


if __name__ == "__main__":
    sys.exit(main())
