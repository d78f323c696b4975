"""Runtimes wired to the fake LLM server: real litellm, real SQLite, real tools."""

from __future__ import annotations

import pytest

from agent.config import load_settings
from agent.runtime import Runtime
from tests.fakes.llm_server import FakeLLMServer


@pytest.fixture
def server():
    srv = FakeLLMServer()
    yield srv
    srv.close()


@pytest.fixture
def open_runtime(server, workspace):
    opened: list[Runtime] = []

    async def _open(*, yolo=True, approver=None, flags=None, **kwargs):
        events: list = []
        base = {"model": "openai/fake-model", "api_base": server.base_url, "api_key": "sk-test", "yolo": yolo,
                "llm": {"retry_base_delay": 0.01, "retry_max_delay": 0.05}}
        base.update(flags or {})
        settings = load_settings(workspace, flags=base)
        runtime = await Runtime.open(settings, on_event=events.append, approver=approver, **kwargs)
        runtime.events = events  # type: ignore[attr-defined]
        opened.append(runtime)
        return runtime

    yield _open
    # Runtimes are closed by the tests' event loop in their own finally blocks when needed;
    # closing here would need that loop, so tests call `await runtime.close()` themselves.


def of_type(events, name):
    return [e for e in events if e.type == name]
