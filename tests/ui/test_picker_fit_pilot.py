"""The session picker at 80×24 (issue 32, item 9): the open session's row keeps its
"(open now)" tag and its age on screen; what gives way is the title, cut with `…`."""

from __future__ import annotations

from agent.ui.screens.picker import CURRENT_TAG, SessionPicker, row
from agent.ui.widgets.tool_render import cells
from tests.ui.test_snapshots import fixed_home, make_app, settle  # noqa: F401 - autouse
from tests.ui.test_snapshots_modals import summaries, utc  # noqa: F401 - a fixture


def _first_line(picker: SessionPicker, index: int) -> str:
    return picker.options.get_option_at_index(index).prompt.plain.split("\n")[0]  # type: ignore[union-attr]


def _room(picker: SessionPicker) -> int:
    options = picker.options
    return options.scrollable_content_region.width - options.get_component_styles("option-list--option").padding.width


async def test_the_open_session_keeps_its_tag_and_the_title_gives_way(tmp_path, utc):  # noqa: F811 - the fixture
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        picker = SessionPicker(summaries(), current_id="s-0000")
        app.push_screen(picker)
        await settle(pilot)
        line = _first_line(picker, 0)
        assert cells(line) <= _room(picker)
        assert line.endswith("2024-03-05" + CURRENT_TAG)
        title = summaries()[0].session.title
        assert not line.startswith(title) and line.split("…")[0] in title  # cut, with "…"
        assert _first_line(picker, 1).startswith("Lexer tokens")  # a row that fits stays whole

        await pilot.resize_terminal(120, 40)  # wider: the whole title comes back
        await settle(pilot)
        assert _first_line(picker, 0).startswith(title)


def test_a_row_without_a_width_is_left_whole():
    [first, *_] = summaries()
    text = row(first, current=True).plain.split("\n")[0]
    assert text.startswith(first.session.title) and text.endswith(CURRENT_TAG)
