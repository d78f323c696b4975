"""filesystem-edit: exact-once matching, diffs, approval, atomic writes that keep style."""

from __future__ import annotations

import json
import os
import re

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext
from agent.tools.fs_edit import FsEdit, make_diff
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry
from tests.fakes.approver import FakeApprover


async def edit(ctx, **args):
    """Through the registry, as the agent loop calls it: failures become `Error:` results."""
    call = ToolCall(id="c1", name="filesystem-edit", arguments=json.dumps(args))
    return await ToolRegistry([FsEdit()]).execute(call, ctx)


def assert_error(res, pattern):
    assert res.is_error and res.content.startswith("Error: "), res.content
    assert re.search(pattern, res.content), res.content


@pytest.fixture
def ctx(workspace, approver):
    return ToolContext(workspace=workspace, permissions=Permissions(approver))


SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 1\n"


async def test_exactly_once_gives_unified_diff(workspace, ctx, approver):
    (workspace / "m.py").write_text(SOURCE)
    res = await edit(
        ctx, filePath="m.py", searchContent="def f():\n    return 1", replaceContent="def f():\n    return 2"
    )
    assert not res.is_error
    expected = "--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,5 @@\n def f():\n-    return 1\n+    return 2\n \n \n def g():\n"
    assert res.content == expected
    assert (workspace / "m.py").read_text() == SOURCE.replace("return 1", "return 2", 1)
    permission = res.meta.pop("permission")  # the approval, stored with the call
    assert permission["decision"] == "once" and permission["allowed"] is True
    assert res.meta == {"path": "m.py", "diff": expected, "replacements": 1}
    assert [(e.before, e.after) for e in res.edits] == [(SOURCE.encode(), (workspace / "m.py").read_bytes())]
    [req] = approver.requests
    assert (req.tool, req.kind, req.key, req.title, req.detail) == (
        "filesystem-edit",
        "edit",
        "edit",
        "Edit m.py",
        expected,
    )


async def test_zero_occurrences_is_an_error_with_hint(workspace, ctx, approver):
    (workspace / "m.py").write_text(SOURCE)
    res = await edit(ctx, filePath="m.py", searchContent="def f():\n  return 1", replaceContent="x")
    assert res.is_error
    assert res.content.startswith("Error: searchContent was not found in m.py.")
    assert "whitespace/indentation starts at line 1" in res.content
    res = await edit(ctx, filePath="m.py", searchContent="nothing like it", replaceContent="x")
    assert "read it again with filesystem-read" in res.content
    assert approver.requests == []
    assert (workspace / "m.py").read_text() == SOURCE


async def test_many_occurrences_needs_context_or_replace_all(workspace, ctx):
    (workspace / "m.py").write_text(SOURCE)
    res = await edit(ctx, filePath="m.py", searchContent="return 1", replaceContent="return 3")
    assert res.is_error
    assert "occurs 2 times in m.py (starting at lines 2, 6)" in res.content
    assert "replaceAll=true" in res.content
    res = await edit(ctx, filePath="m.py", searchContent="return 1", replaceContent="return 3", replaceAll=True)
    assert not res.is_error
    assert (workspace / "m.py").read_text() == SOURCE.replace("return 1", "return 3")
    assert res.meta["replacements"] == 2


async def test_denied_edit_changes_nothing(workspace):
    approver = FakeApprover("deny")
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver))
    (workspace / "m.py").write_text(SOURCE)
    res = await edit(ctx, filePath="m.py", searchContent="def g", replaceContent="def h")
    assert res.is_error and res.content == "Error: the user denied this edit"
    assert (workspace / "m.py").read_text() == SOURCE


async def test_always_is_asked_once(workspace):
    approver = FakeApprover("always")
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver))
    (workspace / "m.py").write_text(SOURCE)
    await edit(ctx, filePath="m.py", searchContent="def f", replaceContent="def f1")
    await edit(ctx, filePath="m.py", searchContent="def g", replaceContent="def g1")
    assert len(approver.requests) == 1
    assert "def f1" in (workspace / "m.py").read_text() and "def g1" in (workspace / "m.py").read_text()


async def test_once_asks_every_time(workspace, ctx, approver):
    (workspace / "m.py").write_text(SOURCE)
    await edit(ctx, filePath="m.py", searchContent="def f", replaceContent="def f1")
    await edit(ctx, filePath="m.py", searchContent="def g", replaceContent="def g1")
    assert len(approver.requests) == 2


async def test_crlf_and_mode_are_preserved(workspace, ctx):
    path = workspace / "run.sh"
    path.write_bytes(b"#!/bin/sh\r\necho hi\r\necho bye\r\n")
    os.chmod(path, 0o755)
    res = await edit(ctx, filePath="run.sh", searchContent="echo hi\necho bye", replaceContent="echo hello\necho bye")
    assert not res.is_error
    assert path.read_bytes() == b"#!/bin/sh\r\necho hello\r\necho bye\r\n"
    assert path.stat().st_mode & 0o777 == 0o755
    assert res.edits[0].before == b"#!/bin/sh\r\necho hi\r\necho bye\r\n"
    assert "\r" not in res.content
    assert sorted(p.name for p in workspace.iterdir()) == ["run.sh"]  # no temp file left


async def test_no_newline_at_end_in_diff(workspace, ctx):
    (workspace / "a.txt").write_text("x\ny")
    res = await edit(ctx, filePath="a.txt", searchContent="y", replaceContent="y\n")
    assert "\\ No newline at end of file" in res.content
    assert (workspace / "a.txt").read_text() == "x\ny\n"


async def test_refusals(workspace, ctx):
    (workspace / "bin.dat").write_bytes(b"\x00\x01")
    assert_error(await edit(ctx, filePath="bin.dat", searchContent="a", replaceContent="b"), "binary file")
    assert_error(await edit(ctx, filePath="nope.txt", searchContent="a", replaceContent="b"), "File not found")
    (workspace / "a.txt").write_text("a")
    assert_error(await edit(ctx, filePath="a.txt", searchContent="a", replaceContent="a"), "identical")
    assert_error(await edit(ctx, filePath="a.txt", searchContent="", replaceContent="b"), "empty")


async def test_outside_workspace_asks_outside_then_edit(workspace, tmp_path, approver, ctx):
    outside = tmp_path / "other.txt"
    outside.write_text("hello\n")
    res = await edit(ctx, filePath="../other.txt", searchContent="hello", replaceContent="bye")
    assert not res.is_error
    assert [r.kind for r in approver.requests] == ["outside", "edit"]
    assert res.meta["path"] == str(outside.resolve())


async def test_file_changed_while_waiting_for_approval(workspace):
    path = workspace / "a.txt"
    path.write_text("one\n")

    async def meddling(request):
        path.write_text("someone else\n")
        return "once"

    ctx = ToolContext(workspace=workspace, permissions=Permissions(meddling))
    assert_error(await edit(ctx, filePath="a.txt", searchContent="one", replaceContent="two"), "changed on disk")
    assert path.read_text() == "someone else\n"


def test_make_diff_headers():
    assert make_diff("a\n", "b\n", "x/y.txt") == "--- a/x/y.txt\n+++ b/x/y.txt\n@@ -1 +1 @@\n-a\n+b\n"
