"""Reads under `Permissions.read_roots` (the user's skill folders, outside the workspace) go on
unasked, and only reads: by a tool that only reads, of a path inside a root (whole components,
symlinks resolved), never a write, never a command's folder."""

from __future__ import annotations

import json

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext
from agent.tools.permissions import READ_TOOLS, ApprovalRequest, Permissions
from agent.tools.registry import default_registry
from tests.fakes.approver import FakeApprover


async def call(ctx, name, **args):
    return await default_registry().execute(ToolCall(id="c1", name=name, arguments=json.dumps(args)), ctx)


@pytest.fixture
def skill(tmp_path):
    folder = tmp_path / "skills" / "release"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: release\ndescription: d\n---\nbody\n")
    (folder / "scripts" / "bump.py").write_text("print('bump')\n")
    return folder


def make_ctx(workspace, roots, approver=None):
    permissions = Permissions(approver, workspace=workspace, allow_commands=[], allow=[])
    permissions.read_roots = [str(r) for r in roots]
    return ToolContext(workspace=workspace, permissions=permissions)


async def test_a_read_under_a_root_needs_no_approval_even_with_nobody_to_ask(workspace, skill):
    ctx = make_ctx(workspace, [skill], approver=None)  # `cairn -p`: an approval would be refused
    res = await call(ctx, "filesystem-read", filePath=str(skill / "scripts" / "bump.py"))
    assert not res.is_error and "print('bump')" in res.content
    assert res.meta["permission"]["decision"] == "rule"
    assert res.meta["permission"]["rule"] == f"read_root:{skill}"
    listed = await call(ctx, "filesystem-find", path=str(skill), pattern="*.py")
    assert not listed.is_error and "bump.py" in listed.content
    found = await call(ctx, "filesystem-search", path=str(skill), pattern="bump")
    assert not found.is_error and "bump" in found.content


async def test_writes_and_reads_elsewhere_still_ask(workspace, skill, tmp_path):
    approver = FakeApprover("deny")
    ctx = make_ctx(workspace, [skill], approver)
    edit = await call(ctx, "filesystem-create", filePath=str(skill / "new.md"), content="x\n")
    assert edit.is_error and not (skill / "new.md").exists()
    (tmp_path / "skills" / "secret.txt").write_text("s\n")  # beside the root, not in it
    (tmp_path / "release-notes.txt").write_text("n\n")  # shares the root's name as a prefix only
    for path in (tmp_path / "skills" / "secret.txt", tmp_path / "release-notes.txt"):
        assert (await call(ctx, "filesystem-read", filePath=str(path))).is_error
    assert [r.kind for r in approver.requests] == ["outside", "outside", "outside"]


async def test_a_symlink_in_a_root_leading_out_of_it_asks(workspace, skill, tmp_path):
    (tmp_path / "private.txt").write_text("p\n")
    (skill / "link.txt").symlink_to(tmp_path / "private.txt")
    approver = FakeApprover("deny")
    res = await call(make_ctx(workspace, [skill], approver), "filesystem-read", filePath=str(skill / "link.txt"))
    assert res.is_error and [r.path for r in approver.requests] == [str(tmp_path / "private.txt")]


def test_only_outside_reads_by_reading_tools_under_a_root_are_covered(tmp_path):
    root = str(tmp_path / "skills" / "a")
    p = Permissions(None, workspace=tmp_path / "ws", allow_commands=[], allow=[])
    p.read_roots = [root]

    def rule(**fields):
        base = {"tool": "filesystem-read", "kind": "outside", "title": "Read", "key": f"outside:{root}/x"}
        request, plan = p.prepare(ApprovalRequest(**{**base, **fields}))
        return p.rule_for(request, plan)

    assert sorted(READ_TOOLS) == ["filesystem-find", "filesystem-read", "filesystem-search"]
    for tool in sorted(READ_TOOLS):
        assert rule(tool=tool) == f"read_root:{root}"
    assert rule(key=f"outside:{root}") == f"read_root:{root}"  # the folder itself
    assert rule(tool="terminal-execute") is None  # a command's working folder is not a read
    assert rule(tool="filesystem-create") is None  # a write (it always asks)
    assert rule(kind="edit", title=f"Edit {root}/x", key="edit") is None
    assert rule(key=f"outside:{root}-other/x") is None
    assert rule(key="elsewhere") is None  # no path known
    p.read_roots = []
    assert rule() is None
