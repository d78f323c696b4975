"""filesystem-find: files by glob, newest first, ignores respected, bounded, read-only (SPEC §8)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext, ToolError
from agent.tools.fs_find import FsFind
from agent.tools.globs import compile_glob
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry, default_registry
from tests.fakes.approver import FakeApprover


@pytest.fixture
def tree(workspace, tmp_path):
    files = [
        "src/a.py",
        "src/sub/b.py",
        "src/sub/deep/c.py",
        "src/d.ts",
        "README.md",
        ".github/ci.yml",
        "build/out.py",
        "debug.log",
        ".git/config",
        "src/we:ird name.py",
    ]
    for n, rel in enumerate(files):
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
        os.utime(path, (1_600_000_000 + n * 100, 1_600_000_000 + n * 100))  # later in the list: newer
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    os.utime(workspace / ".gitignore", (1_500_000_000, 1_500_000_000))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x\n")
    os.symlink(outside, workspace / "src" / "linkdir")
    os.symlink(outside / "secret.py", workspace / "src" / "link.py")
    return workspace


async def find(workspace, approver=None, **arguments):
    registry = ToolRegistry([FsFind()])
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver, allow=[]))
    return await registry.execute(ToolCall(id="c1", name="filesystem-find", arguments=json.dumps(arguments)), ctx)


async def test_newest_first_ignores_respected_no_symlinks(tree):
    res = await find(tree, pattern="*.py")
    assert not res.is_error, res.content
    assert res.content.splitlines() == ["src/we:ird name.py", "src/sub/deep/c.py", "src/sub/b.py", "src/a.py"]
    assert "permission" not in res.meta  # read-only: nothing was asked


async def test_star_lists_everything_but_ignored_and_git(tree):
    res = await find(tree, pattern="*")
    assert res.content.splitlines() == [
        "src/we:ird name.py",
        ".github/ci.yml",
        "README.md",
        "src/d.ts",
        "src/sub/deep/c.py",
        "src/sub/b.py",
        "src/a.py",
        ".gitignore",
    ]


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("sub/*.py", "src", ["src/sub/b.py"]),
        ("src/**/*.py", None, ["src/we:ird name.py", "src/sub/deep/c.py", "src/sub/b.py", "src/a.py"]),
        ("**/deep/*.py", None, ["src/sub/deep/c.py"]),
        ("*.{ts,md}", None, ["README.md", "src/d.ts"]),
        ("src/?.py", None, ["src/a.py"]),
        ("src/[a-b].*", None, ["src/a.py"]),
        ("*.log", None, []),
        ("build/**", None, []),
    ],
)
async def test_globs(tree, pattern, path, expected):
    res = await find(tree, pattern=pattern, **({"path": path} if path else {}))
    assert not res.is_error, res.content
    got = [] if res.content.startswith("No files match") else res.content.splitlines()
    assert got == expected


async def test_max_results(tree):
    res = await find(tree, pattern="*", maxResults=2)
    assert res.content.splitlines() == [
        "src/we:ird name.py",
        ".github/ci.yml",
        "(stopped at 2 paths; narrow the pattern or the path, or raise maxResults)",
    ]


async def test_max_results_with_many_more_files(workspace):
    for d in range(20):
        (workspace / f"d{d}").mkdir()
        for f in range(200):
            (workspace / f"d{d}" / f"{'x' * 100}{f}.py").write_text("")
    res = await asyncio.wait_for(find(workspace, pattern="*.py", maxResults=3), 120)
    assert len(res.content.splitlines()) == 4 and res.meta["more"] is True


async def test_path_errors(tree):
    res = await find(tree, pattern="*", path="src/a.py")
    assert res.is_error and "not a folder" in res.content
    res = await find(tree, pattern="*", path="nope")
    assert res.is_error
    res = await find(tree, pattern="   ")
    assert res.is_error and "empty" in res.content
    res = await find(tree, pattern="{a,{b")
    assert res.is_error and "unclosed" in res.content
    # A NUL can be in JSON but in no file name and no program argument (the fuzz test found it).
    res = await find(tree, pattern="*.py\x00")
    assert res.content == "Error: the glob contains a NUL character, which no file name can hold"


async def test_outside_asks(tree, tmp_path):
    approver = FakeApprover("deny")
    res = await find(tree, approver, pattern="*", path="src/linkdir")
    assert res.is_error and approver.requests[0].kind == "outside"


def test_glob_translation_is_linear_and_anchored():
    glob = compile_glob("*a*a*a*a*a*a*a*a*a*a*b")
    assert not glob.matches("a" * 10_000)
    assert compile_glob("*.py").matches("deep/x/y.py") and not compile_glob("*.py").matches("y.pyc")
    assert compile_glob("./src/*.py").matches("src/x.py") and not compile_glob("src/*.py").matches("src/a/x.py")
    with pytest.raises(ToolError):
        compile_glob("{" * 20 + "}" * 20)


def test_registered():
    registry = default_registry()
    schema = registry.get("filesystem-find").definition()["function"]["parameters"]
    assert set(schema["properties"]) == {"pattern", "path", "maxResults"} and schema["required"] == ["pattern"]
