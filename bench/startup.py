"""Startup to a screen that accepts typing (SPEC §10: ≤ 0.3 s median on 2 cores).

Launches the installed `cairn` in a detached tmux pane (120×36) with a model configured
(no request is made), polls `tmux capture-pane` every ~5 ms, and notes when the prompt's
placeholder is drawn — by the first screen (agent/ui/early.py), which takes typing and
hands it to the app — and when the Textual app itself is up (its status line names the
session). Prints medians of N runs (after one uncounted warm-up run, which also lets
Python write the bytecode cache a real install would have):

    startup_to_prompt_ms median=… runs=[…]
    startup_to_app_ms median=… runs=[…]

then the suite's row. `--quick`: no warm-up, one run. Without tmux the row says
"skipped (no tmux)".

Usage: python bench/startup.py [--runs 5] [--warmup 1] [--cairn PATH] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from run import SKIPPED_NO_TMUX, Row, at_most, cairn_script, common_args, finish, have_tmux
from tmux_timing import READY_TEXT, PrivateTmux

TIMEOUT = 20.0
TARGET_MS = 300.0
FIGURE = "start → prompt accepts typing (tmux)"
APP_FIGURE = "start → Textual app up (status line drawn)"
APP_LIVE = "new session"  # the app's status line; the first screen says "starting…"


def one_run(tmux: PrivateTmux, cairn: Path) -> tuple[float, float]:
    """(ms to the prompt, ms to the app's status line)."""
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp, "home"), Path(tmp, "ws")
        home.mkdir()
        ws.mkdir()
        command = (
            f"env -u PYTHONDONTWRITEBYTECODE CAIRN_HOME={home} {cairn} --model openai/fake "
            f"--api-base http://127.0.0.1:9/v1 --api-key sk-bench --cwd {ws}"
        )
        seen = tmux.times_to_texts(command, [READY_TEXT, APP_LIVE], timeout=TIMEOUT)
        return seen.get(READY_TEXT, seen[APP_LIVE]), seen[APP_LIVE]


def measure(cairn: Path, runs: int, warmup: int) -> list[tuple[float, float]]:
    with PrivateTmux("cairn-bench") as tmux:
        for _ in range(warmup):
            one_run(tmux, cairn)
        return [one_run(tmux, cairn) for _ in range(runs)]


def run(quick: bool = False, *, runs: int = 5, warmup: int = 1, cairn: Path | None = None) -> list[Row]:
    """The suite's rows: median ms from launch to the prompt's placeholder on screen."""
    if quick:
        runs, warmup = 1, 0
    cairn = cairn or cairn_script()
    if not have_tmux():
        return [
            Row("startup", FIGURE, None, target="≤ 300 ms", note=SKIPPED_NO_TMUX),
            Row("startup", APP_FIGURE, None, note=SKIPPED_NO_TMUX),
        ]
    if not cairn.exists():
        raise RuntimeError(f"{cairn} not found: pip install -e . first")
    pairs = measure(cairn, runs, warmup)
    prompt, app = [p for p, _ in pairs], [a for _, a in pairs]
    value, app_value = statistics.median(prompt), statistics.median(app)
    print(f"startup_to_prompt_ms median={value:.0f} runs=[{', '.join(f'{r:.0f}' for r in prompt)}]")
    print(f"startup_to_app_ms median={app_value:.0f} runs=[{', '.join(f'{r:.0f}' for r in app)}]")
    return [
        Row("startup", FIGURE, value, target="≤ 300 ms", ok=at_most(value, TARGET_MS, quick), runs=prompt),
        Row("startup", APP_FIGURE, app_value, runs=app),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs first")
    parser.add_argument("--cairn", default=str(cairn_script()))
    common_args(parser)
    args = parser.parse_args(argv)
    rows = run(args.quick, runs=args.runs, warmup=args.warmup, cairn=Path(args.cairn))
    return finish(rows, args.json)


if __name__ == "__main__":
    sys.exit(main())
