"""A path swapped while the user decides: the write goes where it was approved, or nowhere.

The tools resolve a path, ask, and write after the answer. Whoever can change the workspace
meanwhile (a background process an earlier command started, a build script, a file watcher)
could replace a folder, or the file itself, with a symlink to somewhere else. Each test here
makes that swap deterministically: the approver does it "while the user is deciding", then
says yes. Nothing may land outside the workspace, and the result must say the path changed.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from agent.tools.base import ToolContext, ToolError
from agent.tools.permissions import Permissions
from agent.tools.workspace import read_text, resolve_path
from tests.hostile.conftest import assert_error, execute

ORIGINAL = "def main():\n    return 1\n"
EDIT = {"searchContent": "return 1", "replaceContent": "return 2"}


class SwapApprover:
    """Says "once" to every request; before answering the `on`-kind one, runs `swap`."""

    def __init__(self, swap, on: str = "edit") -> None:
        self.swap, self.on = swap, on
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        if request.kind == self.on and self.swap is not None:
            self.swap()
            self.swap = None
        return "once"


def ctx_with(workspace: Path, approver) -> ToolContext:
    return ToolContext(workspace=workspace, permissions=Permissions(approver), command_timeout=20.0)


@pytest.fixture
def outside(tmp_path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    return out


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder` (temp files included) and its bytes or link target."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        found[rel] = (
            f"-> {os.readlink(path)}" if path.is_symlink() else (b"<dir>" if path.is_dir() else path.read_bytes())
        )
    return found


def swap_for_link(path: Path, target: Path):
    """The attacker's move: the real folder/file moves aside, a symlink takes its name."""

    def swap() -> None:
        if path.exists() or path.is_symlink():
            path.rename(path.with_name(path.name + ".moved"))
        os.symlink(target, path)

    return swap


def assert_changed(result, *fragments: str) -> None:
    assert_error(result, "changed after it was approved", "nothing was written", *fragments)
    assert not result.edits


def no_temp_files(*folders: Path) -> None:
    for folder in folders:
        assert not [p for p in folder.rglob("*") if p.name.endswith(".cairn-tmp")], folder


# -- a folder on the path becomes a symlink ----------------------------------------------------


async def test_edit_folder_swapped_for_symlink_during_approval(registry, workspace, outside):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(ORIGINAL)
    (outside / "app.py").write_text(ORIGINAL)  # same bytes: the "unchanged" check alone passes
    before = snapshot(outside)
    approver = SwapApprover(swap_for_link(workspace / "src", outside))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-edit", {"filePath": "src/app.py", **EDIT}
    )

    assert_changed(result, "src is now a symbolic link", "outside the workspace")
    assert snapshot(outside) == before
    assert (workspace / "src.moved" / "app.py").read_text() == ORIGINAL
    no_temp_files(workspace, outside)


async def test_create_folder_swapped_for_symlink_during_approval(registry, workspace, outside):
    (workspace / "src").mkdir()
    approver = SwapApprover(swap_for_link(workspace / "src", outside))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-create", {"filePath": "src/new.py", "content": "pwned\n"}
    )

    assert_changed(result, "src is now a symbolic link", "outside the workspace")
    assert snapshot(outside) == {}
    no_temp_files(workspace)


async def test_create_missing_folder_planted_as_symlink_during_approval(registry, workspace, outside):
    """`a/b/c.txt` with no `a` yet: `a` appears as a symlink before the folders are made."""
    approver = SwapApprover(lambda: os.symlink(outside, workspace / "a"))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-create", {"filePath": "a/b/c.txt", "content": "pwned\n"}
    )

    assert_changed(result, "a is now a symbolic link", "outside the workspace")
    assert snapshot(outside) == {}


async def test_deeper_folder_swapped_to_a_symlink_inside_is_refused_too(registry, workspace):
    """Even a symlink that stays inside is a change: the approved diff was for another file."""
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(ORIGINAL)
    (workspace / "other").mkdir()
    (workspace / "other" / "app.py").write_text(ORIGINAL)
    approver = SwapApprover(swap_for_link(workspace / "src", workspace / "other"))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-edit", {"filePath": "src/app.py", **EDIT}
    )

    assert_changed(result, "src is now a symbolic link")
    assert "outside the workspace" not in result.content
    assert (workspace / "other" / "app.py").read_text() == ORIGINAL


# -- the file itself becomes a symlink -------------------------------------------------------


async def test_edit_file_swapped_for_symlink_during_approval(registry, workspace, outside):
    (workspace / "app.py").write_text(ORIGINAL)
    (outside / "app.py").write_text(ORIGINAL)
    approver = SwapApprover(swap_for_link(workspace / "app.py", outside / "app.py"))

    result = await execute(registry, ctx_with(workspace, approver), "filesystem-edit", {"filePath": "app.py", **EDIT})

    assert_changed(result, "app.py is now a symbolic link", "outside the workspace")
    assert (outside / "app.py").read_text() == ORIGINAL
    assert (workspace / "app.py").is_symlink()  # left as found: nothing was written
    no_temp_files(workspace, outside)


async def test_overwrite_file_swapped_for_symlink_during_approval(registry, workspace, outside):
    (workspace / "app.py").write_text(ORIGINAL)
    (outside / "app.py").write_text(ORIGINAL)
    approver = SwapApprover(swap_for_link(workspace / "app.py", outside / "app.py"))

    result = await execute(
        registry,
        ctx_with(workspace, approver),
        "filesystem-create",
        {"filePath": "app.py", "content": "pwned\n", "overwrite": True},
    )

    assert_changed(result, "app.py is now a symbolic link", "outside the workspace")
    assert (outside / "app.py").read_text() == ORIGINAL


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
async def test_create_without_overwrite_races_a_symlink(registry, workspace, outside, dangling):
    target = outside / "target.txt"
    if not dangling:
        target.write_text("precious")
    before = snapshot(outside)
    approver = SwapApprover(lambda: os.symlink(target, workspace / "new.txt"))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-create", {"filePath": "new.txt", "content": "pwned\n"}
    )

    assert_changed(result, "new.txt is now a symbolic link", "outside the workspace")
    assert snapshot(outside) == before
    assert (workspace / "new.txt").is_symlink()
    no_temp_files(workspace)


async def test_create_without_overwrite_never_replaces_a_file_that_appeared(registry, workspace):
    approver = SwapApprover(lambda: (workspace / "new.txt").write_text("the user's own work"))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-create", {"filePath": "new.txt", "content": "model text\n"}
    )

    assert_error(result, "new.txt appeared while waiting for approval", "nothing was written")
    assert (workspace / "new.txt").read_text() == "the user's own work"
    no_temp_files(workspace)


async def test_create_without_hard_links_still_refuses_the_race(registry, workspace, outside, monkeypatch):
    """File systems without link(): the O_CREAT | O_EXCL | O_NOFOLLOW path does the same."""

    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    ok = await execute(
        registry,
        ctx_with(workspace, SwapApprover(None)),
        "filesystem-create",
        {"filePath": "d/ok.txt", "content": "fine\n"},
    )
    assert not ok.is_error and (workspace / "d" / "ok.txt").read_text() == "fine\n"

    approver = SwapApprover(lambda: os.symlink(outside / "t.txt", workspace / "new.txt"))
    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-create", {"filePath": "new.txt", "content": "pwned\n"}
    )
    assert_changed(result, "outside the workspace")
    assert snapshot(outside) == {}
    no_temp_files(workspace)


# -- what keeps working -------------------------------------------------------------------


async def test_symlinks_present_when_approved_are_still_followed(registry, workspace):
    """alias.txt -> real.txt and link-dir -> real-dir: resolved before approval, written as approved."""
    (workspace / "real-dir").mkdir()
    (workspace / "real-dir" / "app.py").write_text(ORIGINAL)
    os.symlink("real-dir", workspace / "link-dir")
    os.symlink("real-dir/app.py", workspace / "alias.py")
    ctx = ctx_with(workspace, SwapApprover(None))

    first = await execute(registry, ctx, "filesystem-edit", {"filePath": "link-dir/app.py", **EDIT})
    second = await execute(
        registry,
        ctx,
        "filesystem-edit",
        {"filePath": "alias.py", "searchContent": "return 2", "replaceContent": "return 3"},
    )

    assert not first.is_error and not second.is_error, (first.content, second.content)
    assert (workspace / "real-dir" / "app.py").read_text() == "def main():\n    return 3\n"
    assert (workspace / "alias.py").is_symlink() and (workspace / "link-dir").is_symlink()
    assert second.edits[0].path == str(workspace.resolve() / "real-dir" / "app.py")


async def test_approved_outside_paths_keep_working(registry, workspace, outside):
    (outside / "old.txt").write_text(ORIGINAL)
    approver = SwapApprover(None)
    ctx = ctx_with(workspace, approver)

    created = await execute(
        registry, ctx, "filesystem-create", {"filePath": str(outside / "new" / "deep" / "x.txt"), "content": "hello\n"}
    )
    edited = await execute(registry, ctx, "filesystem-edit", {"filePath": str(outside / "old.txt"), **EDIT})
    yolo = ToolContext(workspace=workspace, permissions=Permissions(yolo=True))
    again = await execute(registry, yolo, "filesystem-create", {"filePath": "../outside/y.txt", "content": "yolo\n"})

    assert not created.is_error and not edited.is_error and not again.is_error
    assert (outside / "new" / "deep" / "x.txt").read_text() == "hello\n"
    assert (outside / "old.txt").read_text() == "def main():\n    return 2\n"
    assert (outside / "y.txt").read_text() == "yolo\n"
    assert [r.kind for r in approver.requests] == ["outside", "edit", "outside", "edit"]


async def test_approved_outside_path_swapped_after_approval_is_refused(registry, workspace, tmp_path, outside):
    (outside / "d").mkdir()
    (outside / "d" / "f.txt").write_text(ORIGINAL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_text(ORIGINAL)
    approver = SwapApprover(swap_for_link(outside / "d", elsewhere))

    result = await execute(
        registry, ctx_with(workspace, approver), "filesystem-edit", {"filePath": str(outside / "d" / "f.txt"), **EDIT}
    )

    assert_changed(result, "is now a symbolic link")
    assert (elsewhere / "f.txt").read_text() == ORIGINAL


# -- reads: checked inside, opened inside ------------------------------------------------------


def test_read_of_a_folder_swapped_after_the_check_is_refused(workspace, outside):
    """Reads inside the workspace never ask, so only the short window between resolving and
    opening is left; the open walks the checked path and refuses a symlink on it."""
    (workspace / "docs").mkdir()
    (workspace / "docs" / "notes.txt").write_text("public\n")
    (outside / "notes.txt").write_text("top secret\n")
    rp = resolve_path("docs/notes.txt", workspace)
    assert rp.inside
    swap_for_link(workspace / "docs", outside)()

    with pytest.raises(ToolError, match="changed after it was checked.*outside the workspace.*nothing was read"):
        read_text(rp, 1 << 20)


async def test_listing_of_a_folder_swapped_after_the_check_is_refused(workspace, outside):
    from agent.tools.fs_read import _list_dir

    (workspace / "docs").mkdir()
    (outside / "secret-name.txt").write_text("x")
    rp = resolve_path("docs", workspace)
    shutil.rmtree(workspace / "docs")
    os.symlink(outside, workspace / "docs")

    with pytest.raises(ToolError, match="changed after it was checked"):
        _list_dir(rp, 100)
