"""`cairn -p` on the fast path never imports litellm: not on the way to the first request
(the ~2 s of CPU issue 33 removed from it), nor in the background beside it."""

from __future__ import annotations

import os

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.anthropic_server import text as a_text
from tests.fakes.llm_server import FakeLLMServer, text
from tests.headless.helpers import cairn, needs_cairn


def _imported(stderr: str) -> set[str]:
    """Top-level packages in `-X importtime`'s report (PYTHONPROFILEIMPORTTIME)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


@needs_cairn
@pytest.mark.parametrize(
    "server_type,step,model",
    [
        (FakeLLMServer, text("fast answer"), "openai/gpt-4o"),
        (FakeAnthropicServer, a_text("fast answer"), "anthropic/claude-sonnet-4-5"),
    ],
    ids=["openai", "anthropic"],
)
def test_headless_run_on_the_fast_path_never_imports_litellm(workspace, server_type, step, model):
    with server_type([step]) as srv:
        env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
        args = ["--model", model, "--api-base", srv.base_url, "--api-key", "sk-test", "--cwd", str(workspace)]
        out = cairn(*args, "-p", "hi", env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "fast answer" in out.stdout
    imported = _imported(out.stderr)
    assert "agent" in imported and "httpx" in imported  # the report is real
    assert "litellm" not in imported and "openai" not in imported


@needs_cairn
def test_the_setting_puts_litellm_back(workspace):
    with FakeLLMServer([text("slow answer")]) as srv:
        env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
        (workspace / ".cairn").mkdir()
        home = os.environ["CAIRN_HOME"]
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write('[llm]\nclient = "litellm"\n')
        args = ["--model", "openai/gpt-4o", "--api-base", srv.base_url, "--api-key", "sk-test"]
        out = cairn(*args, "--cwd", str(workspace), "-p", "hi", env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "slow answer" in out.stdout and "litellm" in _imported(out.stderr)
