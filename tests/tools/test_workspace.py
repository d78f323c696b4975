"""Path resolution and confinement: what is inside, what needs approval."""

from __future__ import annotations

import os

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.permissions import Permissions
from agent.tools.workspace import atomic_write, confine, display_path, resolve_path
from tests.fakes.approver import FakeApprover


def ctx_for(workspace, approver=None) -> ToolContext:
    return ToolContext(workspace=workspace, permissions=Permissions(approver))


def test_relative_paths_are_normalised(workspace):
    (workspace / "src").mkdir()
    rp = resolve_path("./src/../src/app.py", workspace)
    assert rp.inside
    assert rp.display == "src/app.py"
    assert rp.path == (workspace / "src" / "app.py").resolve()


def test_workspace_root_displays_as_dot(workspace):
    assert resolve_path(".", workspace).display == "."
    assert resolve_path("src/", workspace).display == "src"


def test_absolute_path_inside_is_shown_relative(workspace):
    rp = resolve_path(str(workspace / "a.txt"), workspace)
    assert rp.inside and rp.display == "a.txt"


def test_empty_path_is_an_error(workspace):
    with pytest.raises(ToolError, match="empty"):
        resolve_path("  ", workspace)


async def test_dotdot_outside_is_refused_without_approval(workspace):
    with pytest.raises(ToolError, match=r"outside the workspace .*not approved"):
        await confine("../secret.txt", ctx_for(workspace), tool="filesystem-read")


async def test_absolute_outside_asks_and_is_allowed_when_approved(workspace, tmp_path):
    approver = FakeApprover("once")
    target = tmp_path / "elsewhere.txt"
    rp = await confine(str(target), ctx_for(workspace, approver), tool="filesystem-read")
    assert not rp.inside
    assert rp.display == str(target.resolve())
    [req] = approver.requests
    assert req.kind == "outside"
    assert req.key == f"outside:{target.resolve()}"


async def test_outside_denied_by_user(workspace):
    approver = FakeApprover("deny")
    with pytest.raises(ToolError, match="not approved"):
        await confine("/etc/hostname", ctx_for(workspace, approver), tool="filesystem-read")
    assert len(approver.requests) == 1


async def test_outside_always_is_remembered(workspace):
    approver = FakeApprover("always")
    ctx = ctx_for(workspace, approver)
    await confine("/etc/hostname", ctx, tool="filesystem-read")
    await confine("/etc/hostname", ctx, tool="filesystem-read")
    assert len(approver.requests) == 1


async def test_symlink_out_of_the_workspace_is_outside(workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    os.symlink(secret, workspace / "link.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        await confine("link.txt", ctx_for(workspace), tool="filesystem-read")
    rp = await confine("link.txt", ctx_for(workspace, FakeApprover("once")), tool="filesystem-read")
    assert rp.path == secret.resolve()


async def test_symlink_inside_keeps_its_own_name(workspace):
    (workspace / "real.txt").write_text("x")
    os.symlink(workspace / "real.txt", workspace / "alias.txt")
    rp = await confine("alias.txt", ctx_for(workspace), tool="filesystem-read")
    assert rp.inside and rp.display == "alias.txt"
    assert rp.path == (workspace / "real.txt").resolve()


def test_display_path(workspace, tmp_path):
    assert display_path(workspace / "a" / "b.txt", workspace) == "a/b.txt"
    assert display_path(tmp_path / "x", workspace) == str(tmp_path / "x")


def test_atomic_write_keeps_mode_and_leaves_no_temp(workspace):
    target = workspace / "run.sh"
    target.write_text("old")
    os.chmod(target, 0o755)
    atomic_write(target, b"new", 0o755)
    assert target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) == oct(0o755)
    assert [p.name for p in workspace.iterdir()] == ["run.sh"]


def test_symlink_loop_and_nul_are_tool_errors(workspace):
    os.symlink(workspace / "loop", workspace / "loop")
    with pytest.raises(ToolError):
        resolve_path("loop/x", workspace)
    with pytest.raises(ToolError, match="NUL"):
        resolve_path("a\0b", workspace)
