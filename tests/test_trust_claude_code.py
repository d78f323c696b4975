"""`cairn trust` covers a repository that has only Claude Code's files: the hooks of
`.claude/settings.json`, the servers of `.mcp.json`, the agents and commands of `.claude/`.
Before it, `cairn -p` runs none of them and the agents only read; `cairn trust DIR` prints each
command and file, records them, and the next `cairn -p` uses them (checked in what the scripted
model receives); an agent edited since is not trusted any more."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from agent.headless.run import run_headless
from agent.settings.config import load_settings
from agent.settings.prompt_files import folder_trusted
from agent.settings.trust_command import trust_folder
from agent.subagents.definitions import load_definitions
from tests.conftest import REPO_ROOT
from tests.fakes.llm_server import text
from tests.headless.helpers import cairn, needs_cairn

HOOK_SCRIPT = """#!/bin/sh
# Adds the team's rules to every prompt (Claude Code: a UserPromptSubmit hook's stdout is context).
cat > /dev/null
echo "Team rule: every change needs a test."
"""
AGENT = """---
name: reviewer
description: Reviews a change for missing tests. Use after any edit.
tools: Read, Grep, Bash
---
You review changes. Run the tests with Bash and report what is untested.
"""
COMMAND = """---
description: Run the test suite
allowed-tools: Bash(pytest:*)
---
Run pytest and summarise the failures.
"""


@pytest.fixture
def claude_repo(workspace: Path, _isolated_home: Path) -> Path:
    """A repository as a Claude Code user has it: no `.cairn/` at all."""
    hooks = workspace / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "context.sh").write_text(HOOK_SCRIPT)
    (hooks / "context.sh").chmod(0o755 | stat.S_IXUSR)
    settings = {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/context.sh'}]}
            ]
        }
    }
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    (workspace / ".claude" / "agents").mkdir()
    (workspace / ".claude" / "agents" / "reviewer.md").write_text(AGENT)
    (workspace / ".claude" / "commands").mkdir()
    (workspace / ".claude" / "commands" / "test.md").write_text(COMMAND)
    server = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server", "--extras"], "cwd": str(REPO_ROOT)}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"fake": server}}, indent=2))
    # The user's own choice to run Claude Code's settings hooks (agent/hooks/sources.py).
    (_isolated_home / "config.toml").write_text("[hooks]\nread_claude_settings = true\n")
    return workspace


def _flags(server) -> dict:
    return {
        "model": "openai/fake-model",
        "api_base": server.base_url,
        "api_key": "sk-test",
        "mcp": {"startup_timeout": 120, "headless_wait": 120},
    }


async def _run(server, workspace: Path) -> tuple[dict, str]:
    server.add(text("ok"))
    err = io.StringIO()
    settings = load_settings(workspace, flags=_flags(server))
    assert await run_headless(settings, "add a feature", out=io.StringIO(), err=err) == 0, err.getvalue()
    return server.requests[-1], err.getvalue()


def _tools(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


@needs_cairn
async def test_cairn_trust_covers_a_repository_of_claude_code_files_and_cairn_p_uses_them(server, claude_repo):
    before, err = await _run(server, claude_repo)
    assert not any(name.startswith("mcp__fake__") for name in _tools(before))
    assert "Team rule" not in json.dumps(before)
    assert "not trusted" in err
    assert load_definitions(claude_repo)["reviewer"].mode == "plan"  # an untrusted folder's agent only reads

    done = cairn("trust", str(claude_repo), env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert "nothing to trust" not in said
    assert "hooks.UserPromptSubmit (.claude/settings.json): " in said
    assert "mcp.servers.fake (.mcp.json): " in said and "tests.fakes.mcp_server --extras" in said
    assert "  .claude/hooks/context.sh" in said  # the file the hook runs, pinned
    assert "  .claude/agents/reviewer.md" in said and "  .claude/commands/test.md" in said
    assert "Trusted .mcp.json as it is now" in said and "Trusted 2 agent, command and skill file(s)" in said

    after, err = await _run(server, claude_repo)
    assert "mcp__fake__echo" in _tools(after)  # .mcp.json trusted headless: its server started
    assert "Team rule: every change needs a test." in json.dumps(after)  # the hook ran
    reviewer = load_definitions(claude_repo)["reviewer"]
    assert reviewer.mode != "plan" and not reviewer.notes  # the agent keeps the tools it names

    (claude_repo / ".claude" / "agents" / "reviewer.md").write_text(AGENT.replace("Read, Grep", "Read, Write"))
    assert load_definitions(claude_repo)["reviewer"].mode == "plan"  # edited since: asks again


def test_a_folder_with_only_agents_is_trusted_and_one_with_nothing_says_so(workspace):
    said: list[str] = []
    assert trust_folder(workspace, said.append, said.append) == 0
    assert "nothing to trust" in said[-1]
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "reviewer.md").write_text(AGENT)
    assert load_definitions(workspace)["reviewer"].mode == "plan"
    said.clear()
    assert trust_folder(workspace, said.append, said.append) == 0
    assert "  .claude/agents/reviewer.md" in said and not any("nothing to trust" in line for line in said)
    assert load_definitions(workspace)["reviewer"].mode != "plan"
    (workspace / ".claude" / "agents" / "helper.md").write_text(AGENT.replace("reviewer", "helper"))
    assert load_definitions(workspace)["helper"].mode == "plan"  # an agent added since is not trusted


def test_a_linked_skill_folder_added_after_trust_is_a_change(workspace):
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "reviewer.md").write_text(AGENT)
    assert trust_folder(workspace, lambda line: None, lambda line: None) == 0
    assert folder_trusted(workspace)
    (workspace / ".claude" / "skills").mkdir()
    (workspace / ".claude" / "skills" / "linked").symlink_to(workspace / "elsewhere", target_is_directory=True)
    assert not folder_trusted(workspace)
