"""Issue 31 / SPEC §12.13: a read is never previewed, so `filesystem-read` bounds itself: a
window of lines (2,000 by default, as Claude Code), long lines cut, a character budget, and a
header and a last line that say what was left out and how to ask for it."""

from __future__ import annotations

from agent.tools.base import ToolContext
from agent.tools.fs_read import MAX_LINE_CHARS, MAX_READ_CHARS, FsRead
from agent.tools.permissions import Permissions


async def _read(workspace, **args):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None))
    return await FsRead().run(FsRead.Args.model_validate(args), ctx)


async def test_a_5000_line_file_gives_its_first_2000_lines_and_says_how_to_get_the_rest(workspace):
    (workspace / "long.py").write_text("".join(f"x_{i} = {i}\n" for i in range(1, 5001)))
    res = await _read(workspace, filePath="long.py")
    lines = res.content.split("\n")
    assert lines[0] == "📄 long.py (lines 1-2000/5000)"
    assert lines[1] == "1→x_1 = 1" and lines[2000] == "2000→x_2000 = 2000"
    assert "x_2001" not in res.content
    assert lines[-1] == (
        "… showing up to line 2000 of 5000. To read further, call filesystem-read with startLine=2001."
    )
    rest = await _read(workspace, filePath="long.py", startLine=2001)
    assert rest.content.startswith("📄 long.py (lines 2001-4000/5000)\n2001→x_2001 = 2001")


async def test_a_long_line_is_cut_and_the_cut_is_said(workspace):
    (workspace / "min.js").write_text("short\n" + "y" * (MAX_LINE_CHARS + 500) + "\nend\n")
    res = await _read(workspace, filePath="min.js")
    lines = res.content.split("\n")
    assert lines[0] == "📄 min.js (lines 1-3/3)"
    assert lines[2] == "2→" + "y" * MAX_LINE_CHARS + " … [500 more characters on this line]"
    assert lines[3] == "3→end"
    assert lines[4] == f"(1 line cut at {MAX_LINE_CHARS:,} characters)"


async def test_the_window_stops_at_the_character_budget_and_says_where_to_go_on(workspace):
    width = 1_000
    (workspace / "wide.txt").write_text("".join(f"{i:04d}" + "z" * width + "\n" for i in range(1, 501)))
    res = await _read(workspace, filePath="wide.txt")
    shown = MAX_READ_CHARS // (width + 5)
    assert res.content.split("\n")[0] == f"📄 wide.txt (lines 1-{shown}/500)"
    assert f"To read further, call filesystem-read with startLine={shown + 1}." in res.content
    assert len(res.content) <= MAX_READ_CHARS + 1_000
