"""The backend's warm-up (agent/llm/offline.py) pays the first request's one-time costs, so the
first prompt of a session answers as fast as the later ones (bench/first_token.py: first
prompt once loaded 1,012 → 230 ms)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from agent.runtime.backend_load import warm_up
    from agent.llm.client import ChatRequest, stream_chat
    from tests.fakes.llm_server import FakeLLMServer, text

    warm_up("o200k_base")
    before = set(sys.modules)
    tools = [{"type": "function", "function": {"name": "filesystem-read", "description": "read",
              "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}}}}]
    with FakeLLMServer([text("hello")]) as server:
        request = ChatRequest(model="openai/fake-model", messages=[{"role": "user", "content": "hi"}],
                              tools=tools, api_base=server.base_url, api_key="sk-test")
        result = asyncio.run(stream_chat(request))
    assert result.content == "hello", result.content
    new = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("litellm", "openai", "mcp", "mcp_types"))
    print("NEW:" + ",".join(new))
""")


@pytest.mark.slow
def test_the_first_request_with_tools_imports_nothing_new_after_the_warm_up():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("NEW:"))
    assert line == "NEW:", f"imported by the first real request, not by the warm-up: {line[4:]}"
