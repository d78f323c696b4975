""" "Always" remembers a command's own prefix: `python -m pytest`, never every `python` command.

The walk's step: "always" on `python -m pytest -q tests/…` offered `python` commands, and
`python -c "<anything>"` then ran unasked. Claude Code offers `python -m pytest:*` there.
"""

from __future__ import annotations

import shlex
import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.tools.base import ToolContext
from agent.tools.command_scope import command_scope, prefix_matches
from agent.tools.permissions import ApprovalRequest, Permissions, describe_scopes
from tests.fakes.approver import FakeApprover
from tests.tools.test_sandbox import needs_sandbox
from tests.tools.test_terminal import run


@pytest.mark.parametrize(
    "command, scope",
    [
        ("python -m pytest -q tests/test_x.py", "python -m pytest"),
        ("python3.11 -u -m pip install x", "python3.11 -u -m pip"),
        (".venv/bin/python -m pytest", ".venv/bin/python -m pytest"),
        ("python script.py --fast", "python script.py"),
        ("python -c 'print(1)'", "python -c 'print(1)'"),
        ("python -x weird.py", "python -x weird.py"),  # an option cairn does not know: the whole command
        ("node -e 'console.log(1)'", "node -e 'console.log(1)'"),
        ("node server.js --port 3000", "node server.js"),
        ("perl -e 'print 1'", "perl -e 'print 1'"),
        ("bash build.sh all", "bash build.sh"),
        ("npx prettier --write .", "npx prettier"),
        ("npx -y prettier x", "npx -y prettier"),
        ("npx --package evil tool", "npx --package evil tool"),
        ("uv run pytest -q", "uv run pytest"),
        ("uv run python -m pytest -x", "uv run python -m pytest"),
        ("uvx ruff check .", "uvx ruff check"),
        ("poetry run pytest", "poetry run pytest"),
        ("pipx run black .", "pipx run black"),
        ("npm run test -- --watch", "npm run test"),
        ("npm test", "npm test"),
        ("bun run dev", "bun run dev"),
        ("go run main.go", "go run main.go"),
        ("go test ./...", "go test"),
        ("cargo test --release", "cargo test"),
        ("git commit -m x", "git commit"),
        ("git -C sub commit -m x", "git -C sub commit -m x"),  # -C takes a value: the whole command
        ("git --no-pager log -1", "git --no-pager log -1"),
        ("git --version", "git --version"),
        ("make -j4", "make -j4"),
        ("make test", "make test"),
        ("pytest -q tests", "pytest"),
    ],
)
def test_always_is_offered_for_the_commands_own_prefix(command, scope):
    words = shlex.split(command)
    assert command_scope(words) == scope
    assert prefix_matches(words, scope)


def test_the_dialog_names_the_prefix_and_cuts_inline_code():
    assert describe_scopes(["command:python -m pytest"]) == "`python -m pytest` commands"
    label = describe_scopes([f"command:{command_scope(['python', '-c', 'import os; ' * 20])}"])
    assert label.startswith("`python -c 'import os;") and "…` commands" in label and len(label) < 60


# What a shell word may be: printable, with the characters that need quoting.
word = st.text(st.sampled_from("ab-_.:/='\" ();$\\m1"), min_size=1, max_size=8)
program = st.sampled_from(["python", "python3", "node", "npx", "uv", "npm", "git", "perl", "bash", "make", "tool"])


@given(program, st.lists(st.one_of(word, st.sampled_from(["-m", "-c", "-e", "run", "-u", "-y", "--", "x.py"]))))
def test_a_scope_offered_for_a_command_covers_that_command(name, rest):
    words = [name, *rest]
    assert prefix_matches(words, command_scope(words))


@given(st.lists(word, max_size=4))
def test_always_for_a_module_never_covers_inline_code(rest):
    scope = command_scope(["python", "-m", "pytest", "-q", "x"])
    assert not prefix_matches(["python", "-c", *rest], scope)
    assert not prefix_matches(["bash", "-c", *rest], scope)


@needs_sandbox
async def test_always_after_python_m_pytest_still_asks_for_python_c(workspace):
    approver = FakeApprover("always")
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver, workspace=workspace))
    await run(ctx, command="python -m pytest -q x")
    assert approver.requests[0].scopes == ["command:python -m pytest"]
    await run(ctx, command="python -m pytest other")  # covered: runs unasked
    assert len(approver.requests) == 1
    await run(ctx, command="python -c 'print(1)'")  # not covered: asks
    assert len(approver.requests) == 2 and approver.requests[1].scopes == ["command:python -c 'print(1)'"]


def command(text: str) -> ApprovalRequest:
    return ApprovalRequest(tool="terminal-execute", kind="command", key="command:x", title="Run", detail=text)


async def test_always_for_the_project_saves_the_narrowed_prefix(workspace):
    perms = Permissions(FakeApprover("always_project"), workspace=workspace)
    assert await perms.check(command("python -m pytest -q"))
    saved = tomllib.loads((workspace / ".cairn" / "config.toml").read_text())
    assert saved["permissions"]["allow_commands"] == ["python -m pytest"]


@needs_sandbox
@pytest.mark.parametrize("rules", [{"allow": ["command:python"]}, {"allow_commands": ["python"]}])
async def test_a_stored_python_rule_still_covers_every_python_command(workspace, rules):
    """A user who said "always `python`" before keeps it."""
    perms = Permissions(None, workspace=workspace, **{"allow_commands": [], **rules})
    verdict = await perms.check_command(command("python -c 'print(1)'"))
    assert verdict.allowed and verdict.decision == "rule"
