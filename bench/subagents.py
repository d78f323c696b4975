"""What a subagent saves: a scripted exploration of 20 file reads, done inline and through `explore`.

Both runs go through the real loop against the scripted fake server (tests/fakes/llm_server.py)
and the real store: inline, the parent reads 20 files (four steps of five reads) and answers;
through `explore`, the parent hands the same exploration to a child, which reads the same
files and returns a 150-word answer, and the parent answers. The stored sessions are then
priced as bench/cost.py prices recorded sessions (the requests cairn builds for them, the
provider's prompt cache): the parent's last request, and the billed input of the whole task
(parent and child).

    python bench/subagents.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench.cost import price, replay  # noqa: E402

FILES = 20
READS_PER_STEP = 5
LINES_PER_FILE = 160  # ~2,000 tokens each
MODELS = ("anthropic/claude-sonnet-4-5", "openai/gpt-5.1")
PROMPT = "How do the modules under src/ handle configuration? Read them and tell me."
TASK = "Read every module under src/ and report how each handles configuration: file, function, line."
ANSWER = " ".join(["Module src/mod_NN.py reads its settings in load_config at line 12."] * 15)


def _make_workspace(root: Path) -> Path:
    workspace = root / "ws"
    (workspace / "src").mkdir(parents=True)
    for i in range(FILES):
        lines = [f"# module {i}: configuration handling", "import os", ""]
        lines += [f"def step_{i}_{n}(value):  # {n} transforms the value for stage {i}" for n in range(LINES_PER_FILE)]
        (workspace / "src" / f"mod_{i:02}.py").write_text("\n".join(lines) + "\n")
    return workspace


def _read_steps(tool_calls, text) -> list:
    steps = []
    for start in range(0, FILES, READS_PER_STEP):
        calls = [
            (f"r{i}", "filesystem-read", {"filePath": f"src/mod_{i:02}.py"})
            for i in range(start, start + READS_PER_STEP)
        ]
        steps.append(tool_calls(calls))
    steps.append(text(ANSWER))
    return steps


async def _run(workspace: Path, *, through_explore: bool) -> tuple[list, list]:
    """(the parent's active path, the child's or []) after the scripted task."""
    from agent.runtime.runtime import Runtime
    from agent.session.store import Store
    from agent.settings.config import load_settings
    from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

    with FakeLLMServer() as server:
        if through_explore:
            server.add(tool_calls([("s1", "subagent", {"agent": "explore", "task": TASK})]))
            server.add(*_read_steps(tool_calls, text))
            server.add(text("The modules read their settings in load_config (see the list)."))
        else:
            server.add(*_read_steps(tool_calls, text))
        settings = load_settings(
            workspace, flags={"model": "openai/fake-model", "api_base": server.base_url, "api_key": "sk-bench"}
        )
        runtime = await Runtime.open(settings, FrontEnd(on_event=lambda event: None))
        try:
            await runtime.submit(Prompt(PROMPT))
            session_id = runtime.session.id
        finally:
            await runtime.close()
    store = await Store.open()
    try:
        parent = await store.active_path(session_id)
        children = await store.subagent_sessions(session_id)
        child = await store.active_path(children[0].id) if children else []
    finally:
        await store.close()
    return parent, child


def _figures(parent: list, child: list, workspace: Path) -> dict:
    out: dict = {}
    for model in MODELS:
        parent_requests = replay(parent, model=model, mode="default", passes=True, workspace=workspace)
        child_requests = replay(child, model=model, mode="default", passes=True, workspace=workspace) if child else []
        out[model] = {
            "parent_last_request_tokens": parent_requests[-1].tokens,
            "requests": len(parent_requests) + len(child_requests),
            "billed_input_usd": price(parent_requests, model, True) + price(child_requests, model, True),
        }
    return out


async def measure() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CAIRN_HOME"] = str(Path(tmp) / "home")
        workspace = _make_workspace(Path(tmp))
        inline = _figures(*await _run(workspace, through_explore=False), workspace)
        explore = _figures(*await _run(workspace, through_explore=True), workspace)
    return {"inline": inline, "explore": explore}


def table(result: dict) -> str:
    rows = [
        "| run | model | parent's last request (tokens) | requests | billed input (USD) |",
        "|---|---|---:|---:|---:|",
    ]
    for run in ("inline", "explore"):
        for model in MODELS:
            f = result[run][model]
            rows.append(
                f"| {run} | {model} | {f['parent_last_request_tokens']:,} | {f['requests']} | "
                f"{f['billed_input_usd']:.4f} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = asyncio.run(measure())
    print(json.dumps(result) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
