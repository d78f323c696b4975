"""At 80 columns nothing wraps back to the left edge (issue 32, item 9): the header is
shortened to its line, /help and the `/` popup wrap a description under its own column,
the session picker keeps the current session's tag and cuts the title instead."""

from __future__ import annotations

from pathlib import Path

from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.widgets.header import header_text
from tests.ui.conftest import wait_ready

LONG_MODEL = "anthropic/claude-sonnet-4-5-20250929"


def test_the_header_line_fits_its_width_without_cutting_a_phrase():
    first = header_text(Path("/srv/projects/a-rather-long-project-folder"), LONG_MODEL, False, width=76)
    line = first.plain.splitlines()[0]
    assert len(line) <= 76 and line.endswith("asks first") and LONG_MODEL in line
    roomy = header_text(Path("/srv/p"), "openai/gpt-4o", False, width=116).plain.splitlines()[0]
    assert roomy.endswith("asks before commands and edits")


async def test_the_header_is_two_lines_at_80_columns(workspace):
    app = CairnApp(load_settings(workspace, flags={"model": LONG_MODEL, "api_key": "sk-test"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.pause()
        header = app.query_one("#header")
        lines = [line.rstrip() for line in header.render().plain.splitlines()]
        assert len(lines) == 2 and all(len(line) <= 76 for line in lines)
        assert lines[0].endswith("asks first")


def _drawn(renderable, width: int) -> list[str]:
    from rich.console import Console

    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().rstrip("\n").split("\n")


def test_help_wraps_each_description_under_its_column():
    from agent.ui.commands import help_rows
    from agent.ui.widgets.hanging import Hanging

    rows = help_rows()
    lines = _drawn(Hanging(rows), 60)
    assert len(lines) > len(rows)  # some descriptions wrapped at 60 columns
    starts = {line[:12] for line, _ in rows}
    for line in lines:
        if line.strip() and line[:12] not in starts:  # a wrapped rest: under its description column
            assert line.startswith(" " * 21), line


async def test_help_and_the_popup_keep_their_columns_at_80(make_settings):
    from agent.ui.widgets.chat import Notice
    from agent.ui.widgets.hanging import Hanging
    from tests.ui.conftest import send

    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/help")
        notice = [n for n in app.chat.query(Notice) if n.kind == "help"][-1]
        assert isinstance(notice.content, Hanging)
        app.prompt.insert("/")
        await pilot.pause()
        popup = app.prompt.popup
        assert popup.visible
        rows = _drawn(popup.get_option_at_index(0).prompt, 40)
        assert len(rows) > 1 and rows[0].startswith("/help ")
        for continuation in rows[1:]:  # under the description, past the longest command name
            assert continuation.startswith(" " * len("/effort [level] ")), rows
