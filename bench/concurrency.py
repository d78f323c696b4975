"""Several `cairn -p` processes writing one database for a minute (reliability issue, item 4).

Runs the installed console script against the fake LLM server, in a temporary CAIRN_HOME:
2 and 4 processes on different sessions, and 2 on the same session (`--continue` and
`--resume`), each writing for `--seconds` once all of them have started (the workers and
checks are the ones of tests/session/test_concurrency.py, which runs them for ~10 s).
Fails loudly if any process exits non-zero or prints to stderr (a `database is locked`
would), if a printed message is not stored as printed, or if a worker's parent chain or
order is broken. Prints, per setup, the messages and tool rounds each process wrote.

Usage: python bench/concurrency.py [--seconds 60] [--only two|four|same]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.session.test_concurrency import (  # noqa: E402
    CAIRN,
    _seed_session,
    check_database,
    run_writers,
)


def _setups(root: Path) -> dict[str, tuple[list, list[dict]]]:
    setups: dict[str, tuple[list, list[dict]]] = {}
    for name, count in (("two", 2), ("four", 4)):
        workers = []
        for i in range(count):
            ws = root / name / f"ws{i}"
            ws.mkdir(parents=True)
            workers.append((f"{name}{i}", ws, ()))
        setups[name] = (workers, [])
    ws = root / "same" / "ws"
    ws.mkdir(parents=True)
    shared = asyncio.run(_seed_session(root / "same" / "home" / "sessions.db", ws))
    session_id = shared[0]["session_id"]
    setups["same"] = ([("a", ws, ("--continue",)), ("b", ws, ("--resume", session_id))], shared)
    return setups


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", choices=("two", "four", "same"))
    args = parser.parse_args()
    if not CAIRN.exists():
        print(f"no console script at {CAIRN}: pip install -e .", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, (workers, seed) in _setups(root).items():
            if args.only and name != args.only:
                continue
            home = root / name / "home"
            started = time.monotonic()
            printed = run_writers(home, workers, args.seconds)
            wall = time.monotonic() - started
            check_database(home / "sessions.db", {**printed, **({"seed": seed} if seed else {})})
            rows = {tag: len(ms) for tag, ms in printed.items()}
            rounds = {tag: sum(m["role"] == "tool" for m in ms) for tag, ms in printed.items()}
            print(
                f"{name:>4}: {len(workers)} processes, {args.seconds:.0f} s of writes ({wall:.0f} s wall): "
                f"messages {rows}, tool rounds {rounds}; exit 0, stderr clean, nothing lost, chains intact"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
