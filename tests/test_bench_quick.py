"""`python -m bench --quick` still runs every benchmark and prints the one table.

No timing is asserted (figures are printed, never judged in tests): only that the suite
exits 0 and that every benchmark has a row that is either a figure or, for the terminal
benchmarks on a machine without tmux, "skipped (no tmux)".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = [
    "startup",
    "first_token",
    "streaming",
    "resume",
    "pipeline",
    "memory",
    "interrupt",
    "context_files",
    "context_cli",
    "fs_search",
    "sandbox",
    "lsp",
    "entry_point",
    "start_to_request",
    "cost",
]
TMUX_BENCHMARKS = {"startup", "first_token", "start_to_request"}
TIMEOUT = 900  # quick takes a few minutes on a loaded 2-core box (litellm is imported many times)


@pytest.mark.slow
def test_bench_quick_runs_every_benchmark(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_") and k != "TMUX"}
    env["CAIRN_HOME"] = str(tmp_path / "home")  # the benchmarks use their own; nothing leaks either way
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick"], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-5000:]}"
    assert done.returncode == 0, report
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("benchmark ") and "| figure" in line)
    assert "median" in lines[header] and "target" in lines[header] and "ok?" in lines[header], report
    rows = [line.split(" | ") for line in lines[header + 2 :] if " | " in line]
    by_benchmark: dict[str, list[list[str]]] = {}
    current = ""
    for cells in rows:
        current = cells[0].strip() or current
        by_benchmark.setdefault(current, []).append(cells)
    assert sorted(by_benchmark) == sorted(BENCHMARKS), report
    for name, cells in by_benchmark.items():
        for row in cells:
            assert "FAIL" not in row[-1], f"{name}: {row}\n{report}"
            if shutil.which("tmux") is None and name in TMUX_BENCHMARKS:
                assert "skipped (no tmux)" in row[2], report
