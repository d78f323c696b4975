"""Startup to a screen that accepts typing (SPEC §10: ≤ 0.3 s median on 2 cores).

Launches the installed `cairn` in a detached tmux pane (120×36) with a model configured
(no request is made), polls `tmux capture-pane` every ~5 ms until the prompt's
placeholder is drawn, and prints the median of N runs (after one uncounted warm-up run,
which also lets Python write the bytecode cache a real install would have):

    startup_to_prompt_ms median=… runs=[…]

Usage: python bench/startup.py [--runs 5] [--warmup 1] [--cairn PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

READY_TEXT = "Ask cairn"  # the prompt's placeholder (agent/ui/widgets/prompt.py)
TIMEOUT = 20.0


# A private tmux server for the whole benchmark, kept alive by an idle session, so no
# run pays for (or races with) a server starting or shutting down.
SOCKET = f"cairn-bench-{os.getpid()}"


def _tmux(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True)


def one_run(cairn: Path) -> float:
    name = f"cairn-bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp, "home"), Path(tmp, "ws")
        home.mkdir()
        ws.mkdir()
        command = (
            f"env -u PYTHONDONTWRITEBYTECODE CAIRN_HOME={home} {cairn} --model openai/fake "
            f"--api-base http://127.0.0.1:9/v1 --api-key sk-bench --cwd {ws}"
        )
        start = time.perf_counter()
        started = _tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "36", command)
        if started.returncode != 0:
            raise RuntimeError(f"tmux new-session failed: {started.stderr.strip()}")
        try:
            while True:
                elapsed = time.perf_counter() - start
                captured = _tmux("capture-pane", "-p", "-t", name)
                if READY_TEXT in captured.stdout:
                    return elapsed * 1000
                if elapsed > TIMEOUT or captured.returncode != 0:
                    raise RuntimeError(
                        f"no prompt after {elapsed:.1f} s ({captured.stderr.strip() or 'still running'}); "
                        f"screen:\n{captured.stdout}"
                    )
                time.sleep(0.005)
        finally:
            _tmux("kill-session", "-t", name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs first")
    parser.add_argument("--cairn", default=str(Path(sys.executable).parent / "cairn"))
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    cairn = Path(args.cairn)
    if not cairn.exists():
        print(f"{cairn} not found: pip install -e . first", file=sys.stderr)
        return 2
    os.environ.pop("TMUX", None)  # works from inside a tmux session too
    _tmux("new-session", "-d", "-s", "keepalive", "sleep 3600")
    try:
        for _ in range(args.warmup):
            one_run(cairn)
        runs = [one_run(cairn) for _ in range(args.runs)]
    finally:
        _tmux("kill-server")
    print(f"startup_to_prompt_ms median={statistics.median(runs):.0f} runs=[{', '.join(f'{r:.0f}' for r in runs)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
