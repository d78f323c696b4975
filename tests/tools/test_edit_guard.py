"""File edits in acceptEdits never plant what runs later outside the sandbox.

The writable sandbox keeps the git folders, git's hooks path, the configuration that says what
runs and the programs trusted hooks and MCP servers execute read-only
(agent/tools/sandbox_protect.py). The file tools are not sandboxed, so in acceptEdits the same
targets must still ask (`Protection.edit_reason` through `Permissions.prepare`): otherwise the
model writes `.husky/pre-commit` unasked and the user's next commit runs it, with real git.
"""

from __future__ import annotations

import subprocess

import pytest

from agent.tools.permissions import ONCE_ONLY, CommandVerdict, Permissions
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover
from tests.tools.test_permission_modes import decide, edit


def _git(ws, *args):
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)


@pytest.fixture
def husky(workspace):
    _git(workspace, "init", "-q")
    _git(workspace, "config", "core.hooksPath", ".husky/_")
    (workspace / ".husky" / "_").mkdir(parents=True)
    (workspace / ".husky" / "pre-commit").write_text("npm test\n")
    (workspace / "tools").mkdir()
    (workspace / "tools" / "server.py").write_text("print('mcp')\n")
    return workspace


def accept_edits(ws, approver):
    box = Sandbox(ws, bwrap="/bin/true", protect=[ws / "tools" / "server.py"])
    box.probe()
    return Permissions(approver, workspace=ws, sandbox=box, mode="acceptEdits", allow_commands=[])


@pytest.mark.parametrize(
    "target",
    [
        ".husky/pre-commit",  # husky's hook, run by .husky/_/pre-commit at the user's next commit
        ".husky/_/pre-commit",
        ".mcp.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
        "tools/server.py",  # a trusted MCP server's entry file
        "sub/../.husky/new-hook",
    ],
)
async def test_what_runs_later_asks_in_accept_edits(husky, target):
    approver = FakeApprover("deny")
    result, record = await decide(accept_edits(husky, approver), edit(target))
    assert result == CommandVerdict(allowed=False, decision="deny")
    assert len(approver.requests) == 1 and approver.requests[0].reason
    assert approver.requests[0].choices == list(ONCE_ONLY)  # no "always" covers it


@pytest.mark.parametrize("target", ["src/app.py", ".claude/agents/reviewer.md", "tools/util.py", "README.md"])
async def test_ordinary_edits_still_run_unasked(husky, target):
    approver = FakeApprover("deny")
    result, _ = await decide(accept_edits(husky, approver), edit(target))
    assert result == CommandVerdict(allowed=True, decision="accept_edits") and approver.requests == []
