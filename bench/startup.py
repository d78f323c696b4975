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
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from tmux_timing import READY_TEXT, PrivateTmux

TIMEOUT = 20.0


def one_run(tmux: PrivateTmux, cairn: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp, "home"), Path(tmp, "ws")
        home.mkdir()
        ws.mkdir()
        command = (
            f"env -u PYTHONDONTWRITEBYTECODE CAIRN_HOME={home} {cairn} --model openai/fake "
            f"--api-base http://127.0.0.1:9/v1 --api-key sk-bench --cwd {ws}"
        )
        return tmux.times_to_texts(command, [READY_TEXT], timeout=TIMEOUT)[READY_TEXT]


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
    with PrivateTmux("cairn-bench") as tmux:
        for _ in range(args.warmup):
            one_run(tmux, cairn)
        runs = [one_run(tmux, cairn) for _ in range(args.runs)]
    print(f"startup_to_prompt_ms median={statistics.median(runs):.0f} runs=[{', '.join(f'{r:.0f}' for r in runs)}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
