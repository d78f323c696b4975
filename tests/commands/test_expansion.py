"""The pieces of an expansion on their own: arguments as Claude Code fills them, `allowed-tools`
as cairn's keys (never wider than written), what `@path` may read, and where commands are found."""

from __future__ import annotations

import os

from agent.commands.allowed_tools import grant_keys
from agent.commands.arguments import substitute
from agent.commands.catalog import find_command, list_commands
from agent.commands.inline import inline_files, run_bangs
from agent.commands.invocation import ExpandContext, command_sources, resolve
from tests.commands.fixtures import COMMIT, COMPONENT, write


def test_arguments_whole_positional_quoted_and_indexed():
    body = "Review PR #$1 with priority $2 and assign to $3; all: $ARGUMENTS; first: $ARGUMENTS[0]"
    filled, used = substitute(body, '456 "very high"')
    assert used
    assert filled == 'Review PR #456 with priority very high and assign to ; all: 456 "very high"; first: 456'
    assert substitute("Cost: $10 and $1x", "a") == ("Cost: $10 and ax", True)
    assert substitute("No placeholder.", "a b") == ("No placeholder.", False)


def test_allowed_tools_as_keys_never_wider_than_written():
    keys, left_out = grant_keys(
        [
            "Bash(git add:*)",
            "Bash(git status)",
            "Bash(npm run test *)",
            "Edit",
            "Write",
            "Read",
            "Grep",
            "WebFetch(domain:docs.python.org)",
            "mcp__github__create_pr",
            "mcp__linear",
            "Bash",
            "Bash(*)",
            "Bash(rm $(ls):*)",
        ]
    )
    assert keys == [
        "command:git add",
        "command:git status",
        "command:npm run test",
        "edit",
        "fetch:docs.python.org",
        "mcp__github__create_pr",
        "mcp__linear__*",
    ]
    assert left_out == ["Bash", "Bash(*)", "Bash(rm $(ls):*)"]


def test_front_matter_as_claude_code_writes_it(workspace):
    write(workspace / ".claude" / "commands", "commit.md", COMMIT)
    [command] = list_commands(workspace)
    assert command.allowed_tools == ["Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"]
    assert command.argument_hint == "[message]" and command.description == "Create a git commit"
    assert command.scope == "project" and command.label == "project"


def test_subfolders_name_and_label_and_project_over_user(workspace, tmp_path, monkeypatch):
    home = tmp_path / "dot-claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    write(workspace / ".claude" / "commands" / "frontend", "component.md", COMPONENT)
    write(home / "commands", "component.md", "The user's component.")
    write(home / "commands" / "ops", "deploy.md", "Deploy.")
    found = find_command(workspace, "component")
    assert found is not None and found.namespace == "frontend" and found.label == "project:frontend"
    assert find_command(workspace, "frontend:component").path == found.path
    assert find_command(workspace, "backend:component") is None
    deploy = find_command(workspace, "deploy")
    assert deploy is not None and deploy.label == "user:ops"
    assert [c.name for c in list_commands(workspace)] == ["component", "deploy"]


def test_a_repositorys_command_reads_no_file_outside_the_workspace(workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=abc")
    os.symlink(secret, workspace / "link.txt")
    notices: list[str] = []
    body = f"Use @{secret} and @link.txt and @../secret.txt and @alice."
    assert inline_files(body, workspace, own=False, notices=notices) == ""
    assert len(notices) == 3 and all("not included" in n for n in notices)
    # The user's own command may name their own file.
    assert "TOKEN=abc" in inline_files(f"Use @{secret}", workspace, own=True, notices=[])


async def test_bangs_run_in_order_and_only_where_written():
    ran: list[str] = []

    async def run(command: str) -> str:
        ran.append(command)
        return f"<{command}>"

    body = "Status: !`git status`\nBranch: !`git branch --show-current`\nNot this: a!`b` or `!c`"
    assert await run_bangs(body, run) == (
        "Status: <git status>\nBranch: <git branch --show-current>\nNot this: a!`b` or `!c`"
    )
    assert ran == ["git status", "git branch --show-current"]


def test_a_line_that_is_not_a_command_is_not_resolved(workspace):
    write(workspace / ".cairn" / "commands", "review.md", "Review $ARGUMENTS.")
    sources = command_sources(workspace, None)
    assert resolve(sources, "/usr/bin/env python", []) is None
    assert resolve(sources, "review this", []) is None
    found = resolve(sources, "/review a.py", [])
    assert found is not None and found[1] == "a.py"
    expansion = found[0].expand(found[1], ExpandContext(workspace=workspace, trusted=lambda: False))
    assert expansion.body == "Review a.py." and expansion.grants == [] and expansion.model is None
