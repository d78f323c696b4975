"""Test-wide isolation: every test gets its own CAIRN_HOME and no provider keys leak in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.runtime.opening import FrontEnd
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes.llm_server import FakeLLMServer

# Offline facts (SPEC §1) hold in tests before anything imports litellm.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"

_PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "GROQ_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
)


# Tests that drive a real terminal (tmux) or measure the machine (the quick benchmark run)
# share one xdist worker, one at a time: beside each other they would time each other out.
# The rest spread over every core (`-n auto --dist loadgroup` in pyproject.toml).
SERIAL_GROUP = "terminal"
SERIAL_FILES = ("test_bench_quick.py", "test_early_keys.py", "test_process_16.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("tmux") or item.path.name in SERIAL_FILES or "e2e" in item.path.parts:
            item.add_marker(pytest.mark.xdist_group(SERIAL_GROUP))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("cairn_home")
    monkeypatch.setenv("CAIRN_HOME", str(home))
    # Claude Code's user folder too: a developer's own ~/.claude/CLAUDE.md, commands or hooks
    # must not reach a test's prompt (a test of them sets HOME or this variable itself).
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path_factory.mktemp("claude_config")))
    for key in _PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)
    for key in list(os.environ):
        if key.startswith("CAIRN_") and key != "CAIRN_HOME":
            monkeypatch.delenv(key, raising=False)
    yield home


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


# Runtimes wired to the fake LLM server: real litellm, real SQLite, real tools.
@pytest.fixture
def server():
    """The scripted server (tests/fakes/llm_server.py); script it with `.add(...)`. A request
    that finds the script empty, or a step no request used up, fails the test (a test that
    leaves steps on purpose sets `server.allow_unused = True` and says why)."""
    srv = FakeLLMServer()
    yield srv
    srv.close()
    srv.check_script()


@pytest.fixture
def llm_client() -> str:
    """`llm.client` for `open_runtime`: "auto" (the fast path for the fake's OpenAI protocol).
    A module that must hold through both clients overrides it with
    `@pytest.fixture(params=["auto", "litellm"])`."""
    return "auto"


@pytest.fixture
def open_runtime(server, workspace, llm_client):
    """`await open_runtime(...)` → a real Runtime against the fake server; `.events` records events."""

    async def _open(*, yolo=True, approver=None, flags=None, **kwargs):
        events: list = []
        base = {
            "model": "openai/fake-model",
            "api_base": server.base_url,
            "api_key": "sk-test",
            "yolo": yolo,
            "llm": {"retry_base_delay": 0.01, "retry_max_delay": 0.05, "client": llm_client},
        }
        flags = dict(flags or {})
        if "llm" in flags:  # a test's own [llm] settings keep the client under test
            flags["llm"] = {"client": llm_client, **flags["llm"]}
        base.update(flags)
        settings = load_settings(workspace, flags=base)
        runtime = await Runtime.open(settings, FrontEnd(on_event=events.append, approver=approver), **kwargs)
        runtime.events = events  # type: ignore[attr-defined]
        return runtime

    _open.workspace = workspace  # type: ignore[attr-defined]
    # Tests close their runtimes themselves (`await runtime.close()`), on their own loop.
    return _open


@pytest.fixture
def anthropic_server():
    """A FakeAnthropicServer (tests/fakes/anthropic_server.py: the Messages API, for prompt caching);
    script it with `.add(...)`. A scripted step no request used up, or a request past the script's
    end, fails the test."""
    from tests.fakes.anthropic_server import FakeAnthropicServer

    srv = FakeAnthropicServer()
    yield srv
    srv.close()
    srv.check_script()  # no step left unused, no request past the script's end
