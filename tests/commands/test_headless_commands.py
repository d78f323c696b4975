"""Claude Code command files through `cairn -p` (the installed script, the fake server): what
reaches the model for `/commit`, a subfolder's command, `$1 $2`, `@file`, and what a
repository's command the user has not trusted may do (nothing more than a prompt)."""

from __future__ import annotations

import os

from tests.commands.fixtures import COMMIT, COMPONENT, REVIEW, TOUCH, git_repo, tool_results, user_message, write
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, needs_cairn


def run(workspace, steps, prompt, *extra):
    with FakeLLMServer(steps) as srv:
        out = cairn(*base_args(srv, workspace), *extra, "-p", prompt, env=os.environ.copy())
        return out, list(srv.requests)


@needs_cairn
def test_the_users_commit_command_runs_its_git_status_and_may_git_add(workspace, claude_home):
    git_repo(workspace)
    write(claude_home / "commands", "commit.md", COMMIT)
    steps = [tool_calls([("c1", "terminal-execute", {"command": "git add notes.txt"})]), text("Committed.")]
    out, requests = run(workspace, steps, "/commit keep it short")
    assert out.returncode == 0, out.stderr
    sent = user_message(requests[0])
    assert sent.startswith('<command name="commit">\n## Context')
    assert "- Current git status:  M app.py\n?? notes.txt" in sent  # run before the prompt went, inlined
    assert "- Current branch: main" in sent
    assert "create a single git commit. keep it short" in sent and "!`" not in sent
    # allowed-tools: `git add` ran unasked in this turn (headless would have refused it).
    assert "not allowed without approval" not in tool_results(requests[1])["c1"]
    assert "not allowed without approval" not in out.stderr
    assert "allows for this turn: command:git add, command:git status, command:git commit" in out.stderr


@needs_cairn
def test_an_untrusted_repositorys_allowed_tools_grant_nothing(workspace):
    git_repo(workspace)
    write(workspace / ".claude" / "commands", "commit.md", COMMIT)
    steps = [tool_calls([("c1", "terminal-execute", {"command": "git add notes.txt"})]), text("Could not.")]
    out, requests = run(workspace, steps, "/commit")
    assert out.returncode == 0, out.stderr
    assert "?? notes.txt" in user_message(requests[0])  # `git status` only reads: it ran unasked
    assert "this folder is not trusted, so the command's allowed-tools" in out.stderr
    assert "not allowed without approval" in tool_results(requests[1])["c1"] or "Note: not allowed" in out.stderr
    assert "Note: not allowed without approval: Run command: git add notes.txt" in out.stderr


@needs_cairn
def test_a_bang_command_that_would_ask_is_refused_headless_and_said(workspace):
    write(workspace / ".claude" / "commands", "marker.md", TOUCH)
    out, requests = run(workspace, [text("ok")], "/marker")
    assert out.returncode == 0, out.stderr
    assert not (workspace / "made.txt").exists()
    sent = user_message(requests[0])
    assert sent.startswith('<command name="marker">\nMade: [`touch made.txt` did not run. Error: not allowed')
    assert "Note: /marker: `touch made.txt` did not run: Error: not allowed" in out.stderr


@needs_cairn
def test_a_subfolder_command_positional_arguments_and_a_file(workspace):
    commands = workspace / ".claude" / "commands"
    write(commands / "frontend", "component.md", COMPONENT)
    write(commands, "review.md", REVIEW)
    write(workspace / "src", "x.py", "def f():\n    return 1 / 0\n")
    out, requests = run(workspace, [text("Done.")], '/component Button "ui kit"')
    assert out.returncode == 0, out.stderr
    assert "Create the component Button in src/components/ui kit, with a test" in user_message(requests[0])
    out, requests = run(workspace, [text("Done.")], "/frontend:component Card")
    assert "Create the component Card in src/components/, with" in user_message(requests[0])
    out, requests = run(workspace, [text("Line 2.")], "/review")
    sent = user_message(requests[0])
    assert "Review @src/x.py for bugs" in sent
    assert '<file path="src/x.py">\ndef f():\n    return 1 / 0\n</file>' in sent
