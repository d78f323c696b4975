"""What the sandbox adds to a command cairn runs without asking (SPEC §10, §13.1: ≤ 30 ms).

In a git repository of a few hundred files, `git status` and `ls` run through the tool
registry exactly as the model's calls run, two ways, interleaved:

- unconfined: `--yolo` (no sandbox, no git hardening, no repository check): what a command
  cost before the sandbox;
- unasked: the default, a read-only command run unasked: the repository check (git asked
  where its folders are), git's hardening and bubblewrap.

The figure is the difference of the medians (whole tool calls, spawn to exit).

    python bench/sandbox.py [--runs 21] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import Row, at_most, common_args, finish, median  # noqa: E402

from agent.session.models import ToolCall  # noqa: E402
from agent.tools.base import ToolContext  # noqa: E402
from agent.tools.permissions import Permissions  # noqa: E402
from agent.tools.registry import default_registry  # noqa: E402
from agent.tools.sandbox import Sandbox  # noqa: E402

TARGET_MS = 30.0
COMMANDS = ["git status", "ls"]


def make_repo(root: Path) -> None:
    for d in range(20):
        folder = root / f"pkg{d}"
        folder.mkdir(parents=True)
        for f in range(20):
            (folder / f"mod{f}.py").write_text(f"VALUE = {d * 20 + f}\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    (root / "pkg0" / "mod0.py").write_text("VALUE = -1\n")


async def call(registry, ctx: ToolContext, command: str) -> tuple[float, dict]:
    start = time.perf_counter()
    result = await registry.execute(
        ToolCall(id="b", name="terminal-execute", arguments=json.dumps({"command": command})), ctx
    )
    elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise RuntimeError(result.content)
    return elapsed, result.meta


async def measure(runs: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-sandbox-") as tmp:
        root = Path(tmp) / "ws"
        make_repo(root)
        box = Sandbox(root)
        if not box.probe():
            return [Row("sandbox", f"{c}: sandbox overhead", None, note=f"skipped: {box.why_not}") for c in COMMANDS]
        registry = default_registry()
        unasked = ToolContext(workspace=root, permissions=Permissions(None, workspace=root, allow=[], sandbox=box))
        unconfined = ToolContext(workspace=root, permissions=Permissions(None, workspace=root, allow=[], yolo=True))
        rows = []
        for command in COMMANDS:
            times: dict[str, list[float]] = {"unasked": [], "unconfined": []}
            for ctx in (unasked, unconfined):  # warm: the page cache, the first spawn
                await call(registry, ctx, command)
            for _ in range(runs):
                for name, ctx in (("unasked", unasked), ("unconfined", unconfined)):
                    elapsed, meta = await call(registry, ctx, command)
                    assert (meta.get("sandbox") == "read-only") == (name == "unasked"), meta
                    times[name].append(elapsed)
            base, boxed = median(times["unconfined"]), median(times["unasked"])
            overhead = boxed - base
            print(
                f"  {command:<12} unconfined {base:6.1f} ms   unasked (checked, hardened, sandboxed) "
                f"{boxed:6.1f} ms   overhead {overhead:5.1f} ms"
            )
            rows.append(
                Row(
                    "sandbox",
                    f"{command}: sandbox overhead (unasked − unconfined)",
                    overhead,
                    target=f"≤ {TARGET_MS:g} ms",
                    ok=at_most(overhead, TARGET_MS, runs < 5),
                    note=f"unconfined {base:.1f} ms, unasked {boxed:.1f} ms, n={runs}",
                    runs=times["unasked"],
                )
            )
        return rows


def run(quick: bool = False, *, runs: int = 21) -> list[Row]:
    return asyncio.run(measure(2 if quick else runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, runs=args.runs), args.json)


if __name__ == "__main__":
    sys.exit(main())
