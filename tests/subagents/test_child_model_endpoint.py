"""A subagent's model and the user's keys (issue 43, class 4): a repository's definition in an
untrusted folder cannot choose the model, and no definition sends another provider's key to
the endpoint the user set. Through the installed `cairn -p`, keys from the environment as a
user has them, the fake OpenAI-compatible server as the user's `--api-base`; the server
records every request it sees, on any path (a 404 included), so a key sent anywhere there is
caught."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.llm.providers import named_provider
from agent.runtime.ops import Prompt
from agent.subagents.definitions import load_definitions
from agent.subagents.models import choose_child_model
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import cairn, needs_cairn
from tests.subagents.test_subagent_e2e import PARENT, _in

ANTHROPIC_SENTINEL = "sk-ant-SENTINEL-must-never-leave-this-machine"
OPENAI_KEY = "sk-openai-for-the-users-own-server"
TASK = "find where the config is loaded"
FINDER = """\
---
name: finder
description: Finds where things are.
tools: Read, Grep
model: {model}
---
Find it and say where.
"""


class _SeesEverything(FakeLLMServer):
    """The fake server, also keeping each request's line and headers whatever its path."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        base = FakeLLMServer.handler_class

        class Handler(base):  # type: ignore[valid-type,misc]  # a subclass of the fake's own handler
            def parse_request(self) -> bool:
                ok = super().parse_request()
                self.server.owner.seen.append(f"{self.requestline}\n{self.headers}")
                return ok

        self.handler_class = Handler
        super().__init__()


@pytest.fixture
def recording_server():
    srv = _SeesEverything()
    yield srv
    srv.close()
    srv.check_script()


def _env() -> dict[str, str]:
    env = os.environ.copy()
    env.update(OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_API_KEY=ANTHROPIC_SENTINEL)
    return env


def _args(server, workspace: Path) -> list[str]:
    """The user's own OpenAI-compatible server, its key from OPENAI_API_KEY (no --api-key)."""
    return ["--model", "openai/fake-model", "--api-base", server.base_url, "--cwd", str(workspace), "--yolo"]


def _script(server) -> None:
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "finder", "task": TASK})])),
        _in(TASK, text("It is loaded in config.py.")),
        _in(PARENT, text("config.py")),
    )


def _no_sentinel_anywhere(server) -> None:
    assert server.seen, "the server saw no request"
    assert not [s for s in server.seen if ANTHROPIC_SENTINEL in s]
    assert ANTHROPIC_SENTINEL not in json.dumps(server.requests)
    chats = [s for s in server.seen if s.startswith("POST /v1/chat/completions ")]
    assert len(chats) == 3 and all(f"Bearer {OPENAI_KEY}" in s for s in chats)  # each with the user's own key


@needs_cairn
def test_an_untrusted_repository_agent_cannot_send_the_anthropic_key_to_the_users_server(recording_server, workspace):
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "finder.md").write_text(FINDER.format(model="anthropic/claude-sonnet-4-5"))
    _script(recording_server)
    out = cairn(*_args(recording_server, workspace), "-p", PARENT, env=_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout == "config.py\n"
    assert [r["model"] for r in recording_server.requests] == ["fake-model"] * 3  # the child on the parent's model
    _no_sentinel_anywhere(recording_server)


@needs_cairn
def test_the_users_own_agent_on_another_provider_runs_on_the_parents_model_with_a_note(
    recording_server, workspace, _isolated_home
):
    """The user's definition keeps its model, but not to another provider's endpoint: with
    `--api-base` set, `anthropic/…` would post ANTHROPIC_API_KEY to the user's server."""
    (_isolated_home / "agents").mkdir()
    (_isolated_home / "agents" / "finder.md").write_text(FINDER.format(model="anthropic/claude-sonnet-4-5"))
    _script(recording_server)
    out = cairn(*_args(recording_server, workspace), "-p", PARENT, env=_env())
    assert out.returncode == 0, out.stderr
    assert [r["model"] for r in recording_server.requests] == ["fake-model"] * 3
    _no_sentinel_anywhere(recording_server)
    assert "Note: The finder agent runs on openai/fake-model: its model anthropic/claude-sonnet-4-5" in out.stderr


async def test_an_untrusted_agents_model_is_ignored_even_at_the_parents_provider(server, open_runtime, workspace):
    """`model: openai/gpt-4o` is the parent's provider (the endpoint rule lets it through): the
    folder's trust alone decides, and untrusted it is the parent's model."""
    (workspace / ".cairn" / "agents").mkdir(parents=True)
    (workspace / ".cairn" / "agents" / "finder.md").write_text(FINDER.format(model="openai/gpt-4o"))
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "finder", "task": TASK})])),
        _in(TASK, text("config.py")),
        _in(PARENT, text("done")),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    assert [r["model"] for r in server.requests] == ["fake-model"] * 3
    finder = load_definitions(workspace)["finder"]
    assert finder.model is None and any("model openai/gpt-4o ignored" in n for n in finder.notes)


def test_a_trusted_folders_and_the_users_definitions_keep_their_model(workspace, _isolated_home):
    from agent.settings import trust

    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "finder.md").write_text(FINDER.format(model="openai/gpt-4o"))
    assert load_definitions(workspace, trusted=True)["finder"].model == "openai/gpt-4o"
    config = workspace / ".cairn" / "config.toml"
    config.parent.mkdir()
    config.write_text("[tools]\ncommand_timeout = 60\n")
    trust.trust(workspace.resolve(), trust.digest(config.read_bytes()))
    assert load_definitions(workspace)["finder"].model == "openai/gpt-4o"
    (_isolated_home / "agents").mkdir()
    (_isolated_home / "agents" / "mine.md").write_text(FINDER.format(model="openai/gpt-4o").replace("finder", "mine"))
    assert load_definitions(workspace, trusted=False)["mine"].model == "openai/gpt-4o"


@pytest.mark.parametrize(
    ("wanted", "parent", "endpoint", "model"),
    [
        (
            "anthropic/claude-sonnet-4-5",
            "openai/fake-model",
            {"api_base": "http://127.0.0.1:9/v1"},
            "openai/fake-model",
        ),
        ("anthropic/claude-sonnet-4-5", "openai/gpt-4o", {"api_key": "sk-x"}, "openai/gpt-4o"),
        ("claude-sonnet-4-5", "openai/gpt-4o", {"api_base": "http://h/v1"}, "openai/gpt-4o"),  # bare: Anthropic's
        ("gpt-4o-mini", "anthropic/claude-sonnet-4-5", {"api_base": "http://h"}, "anthropic/claude-sonnet-4-5"),
        ("llama3", "openai/fake-model", {"api_base": "http://h/v1"}, "openai/fake-model"),  # unknown: not the same
        ("openai/gpt-4o-mini", "openai/fake-model", {"api_base": "http://h/v1"}, "openai/gpt-4o-mini"),
        ("anthropic/claude-haiku-4-5", "claude-sonnet-4-5", {"api_base": "http://h"}, "anthropic/claude-haiku-4-5"),
        ("anthropic/claude-sonnet-4-5", "openai/gpt-4o", {}, "anthropic/claude-sonnet-4-5"),  # each at its own
        (None, "openai/fake-model", {"api_base": "http://h/v1"}, "openai/fake-model"),
    ],
)
def test_a_childs_model_is_held_to_the_users_endpoint(wanted, parent, endpoint, model):
    keys = {"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oa"}  # each provider's own key is set
    chosen = choose_child_model(
        wanted, parent, api_base=endpoint.get("api_base"), api_key=endpoint.get("api_key"), environ=keys
    )
    assert chosen.model == model
    assert bool(chosen.note) == (model == parent and wanted is not None and wanted != parent)


def test_provider_of_a_model_string():
    assert [named_provider(m) for m in ("Anthropic/x", "claude-3-opus", "o3-mini", "gpt-4o", "llama3", "a/b/c")] == [
        "anthropic",
        "anthropic",
        "openai",
        "openai",
        "",
        "a",
    ]


def test_a_model_id_whose_providers_key_is_not_set_runs_on_the_parents_model_with_a_note():
    """A Claude Code definition's `model: claude-opus-4-1` on an OpenAI user's machine (no
    ANTHROPIC_API_KEY): the child runs on the parent's model, and the user is told, never a
    child failing on a missing key."""
    chosen = choose_child_model("claude-opus-4-1", "openai/gpt-4o", api_base=None, api_key=None, environ={})
    assert chosen.model == "openai/gpt-4o"
    assert chosen.note == "its model claude-opus-4-1 needs ANTHROPIC_API_KEY, which is not set"
    keyed = choose_child_model(
        "claude-opus-4-1", "openai/gpt-4o", api_base=None, api_key=None, environ={"ANTHROPIC_API_KEY": "sk-ant"}
    )
    assert keyed.model == "claude-opus-4-1" and not keyed.note
