"""A command's turn through a real Runtime (`Prompt("/name args")`, the fake server): its
`model` is that turn's only, its `allowed-tools` hold for that turn only, and a repository's
command widens either only once the user trusted the folder."""

from __future__ import annotations

from agent.runtime.ops import Prompt
from agent.settings import trust
from agent.settings.config import read_project_config
from agent.turn.events import Notice
from tests.commands.fixtures import git_repo, tool_results, write
from tests.fakes.llm_server import text, tool_calls

STAGE = """---
description: Stage the new files
allowed-tools: Bash(git add:*)
model: openai/fast-model
---
Stage what is new: $ARGUMENTS
"""


def trust_folder(workspace) -> None:
    (workspace / ".cairn").mkdir(exist_ok=True)
    (workspace / ".cairn" / "config.toml").write_text('model = "openai/fake-model"\n')
    data, raw = read_project_config(workspace, [])
    assert raw is not None
    trust.trust(workspace, trust.config_digest(workspace, raw, data))


ADD = [("c1", "terminal-execute", {"command": "git add notes.txt"})]
AGAIN = [("c2", "terminal-execute", {"command": "git add notes.txt"})]


async def _run(open_runtime, server, *prompts):
    runtime = await open_runtime(yolo=False)
    try:
        for prompt in prompts:
            await runtime.submit(Prompt(prompt))
        return list(server.requests), runtime.events
    finally:
        await runtime.close()


async def test_a_trusted_folders_command_grants_and_picks_the_model_for_its_turn_only(open_runtime, server, workspace):
    git_repo(workspace)
    write(workspace / ".claude" / "commands", "stage.md", STAGE)
    trust_folder(workspace)
    server.add(tool_calls(ADD), text("Staged."), tool_calls(AGAIN), text("Not allowed."))
    requests, events = await _run(open_runtime, server, "/stage notes", "stage notes.txt again")
    assert [r["model"] for r in requests] == ["fast-model", "fast-model", "fake-model", "fake-model"]
    assert "not allowed" not in tool_results(requests[1])["c1"]  # granted in the command's turn
    assert "not allowed" in tool_results(requests[3])["c2"]  # and only there
    assert any("allows for this turn: command:git add" in e.message for e in events if isinstance(e, Notice))


async def test_an_untrusted_folders_command_grants_nothing_and_keeps_the_model(open_runtime, server, workspace):
    git_repo(workspace)
    write(workspace / ".claude" / "commands", "stage.md", STAGE)
    server.add(tool_calls(ADD), text("Not allowed."))
    requests, events = await _run(open_runtime, server, "/stage notes")
    assert [r["model"] for r in requests] == ["fake-model", "fake-model"]
    assert "not allowed" in tool_results(requests[1])["c1"]
    [said] = [e.message for e in events if isinstance(e, Notice) and "not trusted" in e.message]
    assert "allowed-tools (Bash(git add:*)) and model openai/fast-model is not used" in said


async def test_the_users_own_command_needs_no_trust(open_runtime, server, workspace, claude_home):
    git_repo(workspace)
    write(claude_home / "commands", "stage.md", STAGE)
    server.add(tool_calls(ADD), text("Staged."))
    requests, _ = await _run(open_runtime, server, "/stage")
    assert [r["model"] for r in requests] == ["fast-model", "fast-model"]
    assert "not allowed" not in tool_results(requests[1])["c1"]
