"""Issue 46 item 14 (walk 16): /skills, /status, /cost and /agents wrap a long row under its
own text (a hanging indent), not back at column 2; /skills shortens paths (~, the workspace)."""

from __future__ import annotations

from textual.geometry import Region

from agent.ui.app import CairnApp
from agent.ui.commands.listing import indent_of
from agent.ui.widgets.chat import Notice
from tests.skills.helpers import write_skill
from tests.ui.conftest import run_prompt, wait_ready

SIZE = (80, 24)
LONG = "Cut a release: bump the version, write the changelog entry, tag it and push the tag to the remote " * 2


def _drawn(notice: Notice) -> list[str]:
    size = notice.outer_size  # the padding's column included: rows start at column 1
    return [strip.text[1:].rstrip() for strip in notice.render_lines(Region(0, 0, size.width, size.height))]


def test_each_shape_of_row_hangs_under_its_text():
    assert indent_of("  session    explain @src/signer.py · e4a02bb1") == 13  # under the value
    assert indent_of("  Total cost          $0.0040") == 22
    assert indent_of("  1. explore: TASK-A: Find how TimestampSigner checks") == 5  # under the item
    assert indent_of("  openai/fake-model: $0.0000 · 1 request · 3,558 in") == 4  # two further in
    assert indent_of("Status") == 0


async def test_skills_list_wraps_under_each_skill(make_settings, server, workspace, _isolated_home):
    write_skill(workspace / ".claude" / "skills", "release", LONG, "body")
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/skills")
        [notice] = [n for n in app.chat.query(Notice) if n.kind == "help"]
        await pilot.pause()
        rows = _drawn(notice)
    start = next(i for i, row in enumerate(rows) if row.startswith("  release [project: .claude/skills/release]"))
    rest = rows[start + 1 : start + 4]
    assert rest and all(row.startswith("    ") and row[4] != " " for row in rest), rows


async def test_status_wraps_a_long_value_under_its_column(make_settings, server, workspace):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/rename " + "a very long session title about signers " * 2)
        await run_prompt(pilot, "/status")
        notice = [n for n in app.chat.query(Notice) if n.kind == "help"][-1]
        await pilot.pause()
        rows = _drawn(notice)
    start = next(i for i, row in enumerate(rows) if row.startswith("  session    a very long"))
    assert rows[start + 1].startswith(" " * 13) and rows[start + 1][13] != " ", rows
