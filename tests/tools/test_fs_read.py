"""filesystem-read: exact output format, ranges, batches, directories and refusals."""

from __future__ import annotations

import asyncio
import os

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext
from agent.tools.fs_read import FsRead
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry


def ctx_for(workspace, **kw) -> ToolContext:
    return ToolContext(workspace=workspace, permissions=Permissions(None), **kw)


async def read(ctx, **args):
    return await FsRead().run(FsRead.Args.model_validate(args), ctx)


@pytest.fixture
def ctx(workspace):
    return ctx_for(workspace)


async def test_whole_file_format(workspace, ctx):
    (workspace / "a.py").write_text("one\ntwo\nthree\n")
    res = await read(ctx, filePath="a.py")
    assert not res.is_error
    assert res.content == "📄 a.py (lines 1-3/3)\n1→one\n2→two\n3→three"
    assert res.meta == {"paths": ["a.py"]}


async def test_crlf_and_no_trailing_newline(workspace, ctx):
    (workspace / "w.txt").write_bytes(b"a\r\nb")
    res = await read(ctx, filePath="./w.txt")
    assert res.content == "📄 w.txt (lines 1-2/2)\n1→a\n2→b"


async def test_line_range(workspace, ctx):
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    res = await read(ctx, filePath="n.txt", startLine=3, endLine=5)
    assert res.content == "📄 n.txt (lines 3-5/10)\n3→line 3\n4→line 4\n5→line 5"
    res = await read(ctx, filePath="n.txt", startLine=9, endLine=50)
    assert res.content == "📄 n.txt (lines 9-10/10)\n9→line 9\n10→line 10"
    res = await read(ctx, filePath="n.txt", startLine=11)
    assert res.is_error and res.content.startswith("Error: startLine 11 is past the end")
    res = await read(ctx, filePath="n.txt", startLine=5, endLine=2)
    assert res.is_error and "before startLine" in res.content


async def test_empty_file(workspace, ctx):
    (workspace / "e.txt").write_text("")
    res = await read(ctx, filePath="e.txt")
    assert res.content == "📄 e.txt (lines 0-0/0)\n(empty file)"


async def test_output_is_capped_with_a_note(workspace):
    ctx = ctx_for(workspace, max_read_lines=5)
    (workspace / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 101)))
    res = await read(ctx, filePath="big.txt")
    lines = res.content.split("\n")
    assert lines[0] == "📄 big.txt (lines 1-5/100)"
    assert lines[1:6] == ["1→1", "2→2", "3→3", "4→4", "5→5"]
    assert "startLine=6" in lines[6]
    res = await read(ctx, filePath="big.txt", startLine=6)
    assert res.content.startswith("📄 big.txt (lines 6-10/100)\n6→6")


async def test_batch_with_one_missing_file(workspace, ctx):
    (workspace / "a.txt").write_text("A\n")
    (workspace / "b.txt").write_text("B1\nB2\n")
    res = await read(ctx, filePath=["a.txt", "missing.txt", {"path": "b.txt", "startLine": 2}])
    assert not res.is_error
    blocks = res.content.split("\n\n")
    assert blocks[0] == "📄 a.txt (lines 1-1/1)\n1→A"
    assert blocks[1].startswith("Error: File not found: missing.txt")
    assert blocks[2] == "📄 b.txt (lines 2-2/2)\n2→B2"
    assert res.meta == {"paths": ["a.txt", "b.txt"]}


async def test_batch_all_failing_is_an_error(workspace, ctx):
    res = await read(ctx, filePath=["x", "y"])
    assert res.is_error
    assert res.content.count("Error: File not found") == 2


async def test_list_sent_as_json_string(workspace, ctx):
    (workspace / "a.txt").write_text("A\n")
    res = await read(ctx, filePath='["a.txt"]')
    assert res.content == "📄 a.txt (lines 1-1/1)\n1→A"


async def test_missing_file_suggests_close_names(workspace, ctx):
    (workspace / "config.py").write_text("")
    res = await read(ctx, filePath="confg.py")
    assert res.is_error and "config.py" in res.content


async def test_directory_listing(workspace, ctx):
    (workspace / "src").mkdir()
    (workspace / "src" / "b.py").write_text("")
    (workspace / "src" / "a.py").write_text("")
    (workspace / "src" / "lib").mkdir()
    res = await read(ctx, filePath="src/")
    assert res.content == "📁 src (3 entries)\na.py\nb.py\nlib/"
    assert res.meta == {"paths": ["src"]}


async def test_binary_file_is_refused(workspace, ctx):
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    res = await read(ctx, filePath="img.png")
    assert res.is_error
    assert res.content.startswith("Error: img.png is a binary file (16 bytes); ")


async def test_invalid_utf8_is_binary(workspace, ctx):
    (workspace / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    res = await read(ctx, filePath="latin1.txt")
    assert res.is_error and "is a binary file" in res.content


async def test_fifo_is_refused_without_hanging(workspace, ctx):
    os.mkfifo(workspace / "pipe")
    res = await asyncio.wait_for(read(ctx, filePath="pipe"), timeout=5)
    assert res.is_error
    assert res.content == "Error: pipe is not a regular file (device, FIFO or socket); it cannot be read"


async def test_device_outside_needs_approval_then_refused(workspace):
    approve = Permissions(None, yolo=True)
    ctx = ToolContext(workspace=workspace, permissions=approve)
    res = await asyncio.wait_for(read(ctx, filePath="/dev/zero"), timeout=5)
    assert res.is_error and "is not a regular file" in res.content


async def test_outside_path_is_refused(workspace, ctx, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    res = await read(ctx, filePath="../secret.txt")
    assert res.is_error and "outside the workspace" in res.content


@pytest.fixture
def sparse(workspace):
    """3 GB file: 2000 text lines (> 8 KiB), then a hole of NULs (takes no disk space)."""
    path = workspace / "huge.log"
    with open(path, "wb") as f:
        f.write("".join(f"row {i}\n" for i in range(1, 2001)).encode())
        f.truncate(3 * 1024**3)
    return path


async def test_huge_file_without_range_is_refused(sparse, ctx):
    res = await asyncio.wait_for(read(ctx, filePath="huge.log"), timeout=5)
    assert res.is_error
    assert "too large to read whole (3221225472 bytes" in res.content
    assert "startLine" in res.content


async def test_huge_file_with_range_is_streamed(sparse, ctx):
    res = await asyncio.wait_for(read(ctx, filePath="huge.log", startLine=10, endLine=12), timeout=5)
    assert not res.is_error
    lines = res.content.split("\n")
    assert lines[0] == "📄 huge.log (lines 10-12/?)"
    assert lines[1:4] == ["10→row 10", "11→row 11", "12→row 12"]


async def test_huge_file_range_into_binary_part_stops_quickly(sparse, ctx):
    res = await asyncio.wait_for(read(ctx, filePath="huge.log", startLine=1999, endLine=2005), timeout=5)
    assert res.is_error and "binary content at line 2001" in res.content


async def test_streamed_range_caps_lines_and_long_lines(workspace, monkeypatch):
    import agent.tools.fs_read as fs_read

    monkeypatch.setattr(fs_read, "STREAMED_LINE_KEEP_BYTES", 10)
    ctx = ctx_for(workspace, max_file_bytes=100, max_read_lines=3)
    (workspace / "t.txt").write_text("x" * 50 + "\n" + "".join(f"{i}\n" for i in range(2, 60)))
    res = await read(ctx, filePath="t.txt", startLine=1)
    lines = res.content.split("\n")
    assert lines[0] == "📄 t.txt (lines 1-3/?)"
    assert lines[1] == "1→" + "x" * 10 + " … [41 more bytes on this line]"
    assert lines[2:4] == ["2→2", "3→3"]
    assert "startLine=4" in res.content


async def test_through_registry(workspace, ctx):
    (workspace / "a.txt").write_text("A\n")
    reg = ToolRegistry([FsRead()])
    res = await reg.execute(ToolCall(id="1", name="filesystem-read", arguments='{"filePath": "a.txt"}'), ctx)
    assert res.content == "📄 a.txt (lines 1-1/1)\n1→A"
