"""`cairn context` never imports litellm or openai (SPEC §10: `cairn context` ≤ 1 s CPU).

Importing litellm (which imports the openai SDK) costs 2–4 s of CPU; the report needs only
the model's window, which agent/llm/cost_map.py reads from litellm's bundled cost map.
The command runs in a fresh interpreter with `-X importtime`, whose log names every module
imported, on a session whose model the map knows (so the window lookup really runs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.session.models import Message, ToolCall
from agent.session.store import Store

REPO = Path(__file__).resolve().parent.parent
FORBIDDEN = ("litellm", "openai")


async def _session(workspace: Path) -> str:
    store = await Store.open()
    try:
        session = await store.create_session(cwd=str(workspace), model="anthropic/claude-sonnet-4-5", title="t")
        await store.append(session, Message(role="user", content="list the files"))
        await store.append(
            session,
            Message(
                role="assistant", tool_calls=[ToolCall(id="c1", name="terminal-execute", arguments='{"command":"ls"}')]
            ),
        )
        await store.append(
            session,
            Message(
                role="tool",
                tool_call_id="c1",
                tool_name="terminal-execute",
                content='{"command":"ls","stdout":"a.py\\n","stderr":"","exitCode":0}',
            ),
        )
        await store.append(
            session,
            Message(
                role="assistant",
                content="One file: a.py.",
                meta={"usage": {"prompt_tokens": 2_400, "completion_tokens": 6}},
            ),
        )
        return session.id
    finally:
        await store.close()


def _imported(importtime_log: str) -> set[str]:
    """Module names from `-X importtime` lines: `import time: self | cumulative | name`."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in importtime_log.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


@pytest.mark.parametrize("flags", [["--json"], ["--json", "--dump"], ["--dump"]])
async def test_context_command_imports_neither_litellm_nor_openai(workspace, flags):
    session_id = await _session(workspace)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agent.cli", "context", session_id, *flags],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    imported = _imported(out.stderr)
    assert "agent.context.inspect" in imported and "agent.llm.cost_map" in imported  # the log is read right
    heavy = sorted(m for m in imported if m.split(".")[0] in FORBIDDEN)
    assert heavy == []
    if "--json" in flags:
        report = json.loads(out.stdout)
        assert report["session_id"] == session_id and report["model"] == "anthropic/claude-sonnet-4-5"
        assert report["window"] == 200_000  # from the cost map, not the configured default
    else:
        assert "200,000 tokens" in out.stdout
