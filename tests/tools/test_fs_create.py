"""filesystem-create: new files with folders, explicit overwrite, approval."""

from __future__ import annotations

import os

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.fs_create import FsCreate
from agent.tools.permissions import Permissions
from tests.fakes.approver import FakeApprover


async def create(ctx, **args):
    return await FsCreate().run(FsCreate.Args.model_validate(args), ctx)


@pytest.fixture
def ctx(workspace, approver):
    return ToolContext(workspace=workspace, permissions=Permissions(approver))


async def test_creates_file_and_folders(workspace, ctx, approver):
    res = await create(ctx, filePath="src/pkg/new.py", content="print('hi')\nx = 1\n")
    assert not res.is_error
    assert res.content == "Created src/pkg/new.py (18 bytes, 2 lines)"
    assert (workspace / "src" / "pkg" / "new.py").read_text() == "print('hi')\nx = 1\n"
    assert res.meta["path"] == "src/pkg/new.py"
    assert res.edits[0].before is None
    assert res.meta["diff"].startswith("--- a/src/pkg/new.py\n+++ b/src/pkg/new.py\n")
    [req] = approver.requests
    assert (req.tool, req.kind, req.key, req.title, req.detail) == (
        "filesystem-create",
        "edit",
        "edit",
        "Create src/pkg/new.py",
        "print('hi')\nx = 1\n",
    )


async def test_new_file_gets_normal_permissions(workspace, ctx):
    await create(ctx, filePath="a.txt", content="x")
    mask = os.umask(0)
    os.umask(mask)
    assert (workspace / "a.txt").stat().st_mode & 0o777 == 0o666 & ~mask


async def test_refuses_to_overwrite_by_default(workspace, ctx, approver):
    (workspace / "a.txt").write_text("old\n")
    with pytest.raises(ToolError, match="already exists.*overwrite=true"):
        await create(ctx, filePath="a.txt", content="new\n")
    assert (workspace / "a.txt").read_text() == "old\n"
    assert approver.requests == []


async def test_overwrite_shows_diff_and_keeps_before(workspace, ctx, approver):
    path = workspace / "a.sh"
    path.write_text("old\n")
    os.chmod(path, 0o700)
    res = await create(ctx, filePath="a.sh", content="new\nline\n", overwrite=True)
    assert res.content == "Overwrote a.sh (9 bytes, 2 lines)"
    assert res.edits[0].before == b"old\n"
    assert path.read_text() == "new\nline\n"
    assert path.stat().st_mode & 0o777 == 0o700
    [req] = approver.requests
    assert req.title == "Overwrite a.sh"
    assert req.detail == res.meta["diff"] and "-old\n+new\n+line\n" in req.detail


async def test_denied(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(FakeApprover("deny")))
    res = await create(ctx, filePath="a.txt", content="x")
    assert res.is_error and res.content == "Error: the user denied creating this file"
    assert not (workspace / "a.txt").exists()


async def test_directory_and_file_as_parent(workspace, ctx):
    (workspace / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await create(ctx, filePath="d", content="x", overwrite=True)
    (workspace / "f").write_text("")
    with pytest.raises(ToolError, match="not a folder"):
        await create(ctx, filePath="f/x.txt", content="x")


async def test_outside_denied_without_approval(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None))
    with pytest.raises(ToolError, match="outside the workspace"):
        await create(ctx, filePath="../escape.txt", content="x")
    assert not (workspace.parent / "escape.txt").exists()


async def test_counts_last_line_without_newline(workspace, ctx):
    res = await create(ctx, filePath="a.txt", content="a\nb")
    assert res.content == "Created a.txt (3 bytes, 2 lines)"
    res = await create(ctx, filePath="e.txt", content="")
    assert res.content == "Created e.txt (0 bytes, 0 lines)"
    res = await create(ctx, filePath="one.txt", content="x")
    assert res.content == "Created one.txt (1 byte, 1 line)"  # not "1 lines"
