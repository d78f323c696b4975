"""filesystem-search and filesystem-find over a 100,000-file tree (issue 19: bounded time).

The tree is generated in a temporary folder: 1,000 folders of 100 small source files, one
ignored `build/` folder of another 10,000 (left out by `.gitignore`), some binary files, and
one file holding the rare word. Each figure is the median of several calls through the tool
registry, exactly as the model's calls run (rg started, output bounded, paths shown):

- search rare: a word in one file (the whole tree is read);
- search common: a word on every line (stops at maxResults=100);
- search with a glob (`*.py`: half the files);
- find `*.py` (newest first: every file is listed and sorted by time);
- find `pkg0/**/*.py`, a path glob.

    python bench/fs_search.py [--files 100000] [--runs 5] [--quick] [--json FILE]

SPEC §10 sets no target; the tools stop at 30 s and say so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import Row, common_args, finish, median  # noqa: E402

from agent.session.models import ToolCall  # noqa: E402
from agent.tools.base import ToolContext  # noqa: E402
from agent.tools.permissions import Permissions  # noqa: E402
from agent.tools.registry import default_registry  # noqa: E402

FILES_PER_FOLDER = 100
SOURCE = "import os\n\ndef handler(event):\n    return os.environ.get('STAGE', 'dev')  # common\n"


def make_tree(root: Path, files: int) -> None:
    folders = max(1, files // FILES_PER_FOLDER)
    for d in range(folders):
        folder = root / f"pkg{d % 10}" / f"mod{d}"
        folder.mkdir(parents=True)
        for f in range(FILES_PER_FOLDER):
            ext = "py" if f % 2 == 0 else "ts"
            (folder / f"file{f}.{ext}").write_text(SOURCE)
        (folder / "blob.bin").write_bytes(b"common\0" * 100)
    build = root / "build"
    build.mkdir()
    for f in range(files // 10):
        (build / f"out{f}.py").write_text(SOURCE + "needle_in_build\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "pkg3" / "mod3" / "file7.ts").write_text(SOURCE + "the_rare_needle = 1\n")


async def call(registry, ctx, name: str, arguments: dict) -> tuple[float, str]:
    start = time.perf_counter()
    result = await registry.execute(ToolCall(id="b", name=name, arguments=json.dumps(arguments)), ctx)
    elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise RuntimeError(result.content)
    return elapsed, result.content


CASES = [
    ("search rare word", "filesystem-search", {"pattern": "the_rare_needle"}, "pkg3/mod3/file7.ts:5:"),
    ("search common word (maxResults 100)", "filesystem-search", {"pattern": "common"}, "(stopped at 100"),
    (
        "search, glob *.py",
        "filesystem-search",
        {"pattern": "the_rare_needle|needle_in_build", "glob": "*.py"},
        "No matches",
    ),
    ("find *.py (newest first)", "filesystem-find", {"pattern": "*.py"}, "(stopped at 100"),
    ("find pkg0/**/*.py", "filesystem-find", {"pattern": "pkg0/**/*.py"}, "pkg0/"),
]


async def measure(files: int, runs: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="cairn-bench-search-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        make_tree(root, files)
        count = sum(len(f) for _, _, f in os.walk(root))
        print(f"tree: {count:,} files in {time.perf_counter() - start:.1f} s; {os.cpu_count()} CPUs")
        registry = default_registry()
        ctx = ToolContext(workspace=root, permissions=Permissions(None, allow=[]))
        rows = []
        for figure, tool, arguments, expect in CASES:
            await call(registry, ctx, tool, arguments)  # the page cache warm, as in a working session
            times = []
            for _ in range(runs):
                elapsed, content = await call(registry, ctx, tool, arguments)
                assert expect in content, (figure, content[:300])
                assert "build/" not in content, (figure, "an ignored file was reported")
                times.append(elapsed)
            print(f"  {figure:<40} median {median(times):8.1f} ms  (min {min(times):.1f}, max {max(times):.1f})")
            rows.append(
                Row(
                    "fs_search",
                    f"{figure}, {count // 1000}k files",
                    median(times),
                    note=f"min {min(times):.0f}, max {max(times):.0f}, n={runs}",
                    runs=times,
                )
            )
        return rows


def run(quick: bool = False, *, files: int = 100_000, runs: int = 5) -> list[Row]:
    return asyncio.run(measure(5_000 if quick else files, 1 if quick else runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, files=args.files, runs=args.runs), args.json)


if __name__ == "__main__":
    sys.exit(main())
