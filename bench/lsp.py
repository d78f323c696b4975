"""What diagnostics after edits cost (SPEC §13.8): the median time a `filesystem-edit` takes with
a warm language server against the same edit without one.

pylsp (python-lsp-server with pyflakes, a dev dependency) runs in the sandbox, as cairn runs it,
on a generated ~300-line module. After a warm-up (start-up, the module opened, a few edits), the
edits alternate between introducing an undefined name and fixing it, through the tool registry
as the model's calls run. The figure is the difference of the medians; most of it is pylsp's own
0.5 s lint debounce, not cairn's.

    python bench/lsp.py [--runs 11] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run import Row, common_args, finish, median  # noqa: E402

from agent.lsp.manager import LspManager  # noqa: E402
from agent.session.models import ToolCall  # noqa: E402
from agent.settings.schema import LspSettings  # noqa: E402
from agent.tools.base import ToolContext  # noqa: E402
from agent.tools.fs_edit import FsEdit  # noqa: E402
from agent.tools.permissions import Permissions  # noqa: E402
from agent.tools.registry import ToolRegistry  # noqa: E402
from agent.tools.sandbox import Sandbox  # noqa: E402

PYLSP = Path(sys.executable).parent / "pylsp"
WARM_EDITS = 3


def module_text() -> str:
    parts = ["import os\n"]
    for n in range(60):
        parts.append(f"\n\ndef func_{n}(value):\n    total = value + {n}\n    return os.path.join(str(total), 'x')\n")
    parts.append("\n\nRESULT = func_0(1)\n")
    return "".join(parts)


async def edit(registry: ToolRegistry, ctx: ToolContext, search: str, replace: str) -> tuple[float, str]:
    start = time.perf_counter()
    arguments = json.dumps({"filePath": "mod.py", "searchContent": search, "replaceContent": replace})
    result = await registry.execute(ToolCall(id="b", name="filesystem-edit", arguments=arguments), ctx)
    elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise RuntimeError(result.content)
    return elapsed, result.content


async def timed_edits(registry: ToolRegistry, ctx: ToolContext, runs: int, *, expect: bool) -> list[float]:
    times = []
    for n in range(runs):
        broken = n % 2 == 0
        search, replace = ("func_0(1)", "fnc_0(1)") if broken else ("fnc_0(1)", "func_0(1)")
        elapsed, said = await edit(registry, ctx, search, replace)
        if expect and broken and "undefined name 'fnc_0'" not in said:
            raise RuntimeError(f"no diagnostic in the result: {said[-300:]}")
        times.append(elapsed)
    if runs % 2:  # leave the file fixed
        await edit(registry, ctx, "fnc_0(1)", "func_0(1)")
    return times


async def measure(runs: int) -> list[Row]:
    if not PYLSP.exists():
        return [Row("lsp", "diagnostics per edit (server warm)", None, note="skipped: pylsp is not installed")]
    with tempfile.TemporaryDirectory(prefix="cairn-bench-lsp-") as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "mod.py").write_text(module_text())
        box = Sandbox.for_folder(root)
        if not box.probe():
            return [Row("lsp", "diagnostics per edit (server warm)", None, note=f"skipped: {box.why_not}")]
        manager = LspManager(LspSettings(timeout_ms=30_000, servers={"pylsp": {"command": [str(PYLSP)]}}), root, box)
        registry = ToolRegistry([FsEdit()])
        plain = ToolContext(workspace=root, permissions=Permissions(None, workspace=root, yolo=True))
        with_lsp = ToolContext(workspace=root, permissions=Permissions(None, workspace=root, yolo=True))
        with_lsp.lsp = manager
        try:
            await timed_edits(registry, with_lsp, WARM_EDITS, expect=True)  # start-up, the module opened
            base = median(await timed_edits(registry, plain, runs, expect=False))
            timed = await timed_edits(registry, with_lsp, runs, expect=True)
        finally:
            await manager.close()
    warm = median(timed)
    print(f"  filesystem-edit without a server {base:6.1f} ms   with pylsp (warm) {warm:6.1f} ms")
    return [
        Row(
            "lsp",
            "diagnostics per edit (server warm, edit with − without)",
            warm - base,
            note=f"pylsp in the sandbox; without {base:.1f} ms, with {warm:.1f} ms, n={runs}",
            runs=timed,
        )
    ]


def run(quick: bool = False, *, runs: int = 11) -> list[Row]:
    return asyncio.run(measure(2 if quick else runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, runs=args.runs), args.json)


if __name__ == "__main__":
    sys.exit(main())
