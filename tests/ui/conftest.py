"""Helpers for driving CairnApp with Textual's pilot against the scripted LLM server."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from agent.settings.config import load_settings
from tests.fakes.llm_server import FakeLLMServer

# The first Runtime.open in a process imports litellm (several seconds on a slow box).
READY_TIMEOUT = 90.0
TIMEOUT = 20.0


@pytest.fixture
def server():
    """As tests/conftest.py's: an overrun or an unused scripted step fails the test."""
    with FakeLLMServer() as srv:
        yield srv
    srv.check_script()


@pytest.fixture
def make_settings(workspace, server):
    def make(**flags):
        base = {"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test"}
        base.update(flags)
        return load_settings(workspace, flags=base)

    return make


async def wait_for(pilot, predicate: Callable[[], object], timeout: float = TIMEOUT, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


async def wait_ready(pilot) -> None:
    """The runtime is open, or opening it ended (no model, an error) and the app is done
    with that: `no_model` is set before the panel is mounted and the prompts sent meanwhile
    are given back, so the open must also be over (`opening` is cleared last)."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: (app.runtime is not None or app.no_model or app.open_error) and not app.opening,
        READY_TIMEOUT,
        "the runtime to open",
    )


async def send(pilot, text: str) -> None:
    """Type `text` into the prompt and press Enter."""
    prompt = pilot.app.prompt
    prompt.insert(text)
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


async def run_prompt(pilot, text: str, timeout: float = READY_TIMEOUT) -> None:
    """Send a prompt and wait until the turn and every stream into the chat finished (the first
    request may still be importing litellm on a loaded machine: a hang detector, not a time)."""
    app = pilot.app
    await send(pilot, text)
    await wait_for(pilot, lambda: not app.turn_running, timeout, "the turn to finish")
    await app.workers.wait_for_complete()
    await pilot.pause()


def chat_text(app) -> str:
    """Everything the chat shows as plain text (user, assistant, notices, tool headers)."""
    from agent.ui.widgets.chat import AssistantMessage, Notice, ToolBlock, UserMessage

    parts = []
    for w in app.chat.children:
        if isinstance(w, (UserMessage, Notice, AssistantMessage)):
            parts.append(w.text)
        elif isinstance(w, ToolBlock):
            parts.append(f"{w.call.name} {w.summary}")
    return "\n".join(parts)
