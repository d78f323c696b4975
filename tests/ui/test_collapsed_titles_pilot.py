"""A collapsed tool block's one line at 80×24 (issue 32, items 7 and 8): a summary too long
for the row ends in `…` (at a word boundary when one is near) instead of stopping mid-word,
and every collapsed block with room for it names the key that reaches it: Ctrl+O on the one
that key opens, Ctrl+↑ on the older ones (agent/ui/widgets/block_select.py)."""

from __future__ import annotations

import json

from textual.widgets import Collapsible, Static

from agent.session.models import Message
from agent.ui.early_history import history_lines
from agent.ui.widgets.tool_block import HINT_SEP
from agent.ui.widgets.tool_render import cells, fit_line
from tests.ui.conftest import wait_for
from tests.ui.test_snapshots import call, command_result, fixed_home, make_app, settle  # noqa: F401 - autouse

EXPAND_HINT = HINT_SEP + "Ctrl+O to expand"
SELECT_HINT = HINT_SEP + "Ctrl+↑ to select"
LONG_ERROR = "Error: the configuration file could not be parsed because the table on line twelve is declared twice"


def test_fit_line_cuts_at_a_word_boundary_when_one_is_near():
    assert fit_line("short enough", 20) == "short enough"
    assert fit_line("the quick brown fox jumps", 18) == "the quick brown…"
    assert fit_line("a " + "x" * 40, 20) == "a " + "x" * 17 + "…"  # the space is too far back: a hard cut
    assert fit_line("x" * 30, 10) == "x" * 9 + "…"
    assert cells(fit_line("表" * 20, 9)) <= 9  # wide characters count two cells
    assert fit_line("anything", 0) == ""


def test_the_first_screen_cuts_a_long_command_with_an_ellipsis():
    command = "make test && echo finished-the-whole-thing-now && " + "printf 'more words here' " * 4
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "terminal-execute", "arguments": json.dumps({"command": command})}],
        },
    ]
    [line] = [line for line in history_lines(messages, 80) if "terminal-execute" in line]
    shown = line.split("\x1b[0m ", 2)[-1]
    assert shown.endswith("…")
    assert cells(line.replace("\x1b[2m", "").replace("\x1b[1m", "").replace("\x1b[0m", "")) <= 80


def _titles(app) -> list[tuple[Static, Collapsible]]:
    folds = [c for block in app.chat.tool_blocks for c in block.query(Collapsible)]
    return [(c.query_one("CollapsibleTitle", Static), c) for c in folds]


def _room(title: Static, collapsible: Collapsible) -> int:
    """Cells the title's text has on its row (its padding and the frame around it off)."""
    return collapsible.size.width - title.styles.gutter.width


def history() -> list[Message]:
    c1 = call("c1", "terminal-execute", {"command": "make test"})
    c2 = call("c2", "filesystem-edit", {"filePath": "src/parse.py"})
    c3 = call("c3", "terminal-execute", {"command": "make lint"})
    six = "\n".join(f"line {i}" for i in range(6))
    return [
        Message(id="u1", role="user", content="go"),
        Message(id="a1", role="assistant", content="", tool_calls=[c1, c2, c3]),
        command_result("c1", c1.arguments, six, "", 3),
        Message(
            id="r-c2",
            role="tool",
            tool_call_id="c2",
            tool_name="filesystem-edit",
            content=LONG_ERROR + "\nsecond line",
            status="error",
        ),
        command_result("c3", c3.arguments, six, "", 3),
    ]


async def test_a_long_collapsed_summary_ends_in_an_ellipsis_at_80_columns(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(history())
        await settle(pilot)
        title, collapsible = _titles(app)[1]
        shown = title.render().plain  # type: ignore[union-attr]
        assert cells(shown) <= _room(title, collapsible)
        assert shown.endswith("…")
        cut = shown[2:-1]  # after "▶ ", before "…"
        assert LONG_ERROR.startswith(cut) and LONG_ERROR[len(cut)] == " "  # at a word's end


async def test_collapsed_blocks_name_the_key_that_opens_them(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(history())
        await settle(pilot)
        (first, _), (long_error, _), (newest, box) = _titles(app)
        assert first.render().plain == "▶ exit 3 · 6 lines" + SELECT_HINT  # type: ignore[union-attr]
        assert newest.render().plain == "▶ exit 3 · 6 lines" + EXPAND_HINT  # type: ignore[union-attr]
        assert "Ctrl+O" in EXPAND_HINT and cells(newest.render().plain) <= _room(newest, box)  # type: ignore[union-attr]
        assert "Ctrl+" not in long_error.render().plain  # type: ignore[union-attr]  # no room: the summary comes first
        for title, _ in _titles(app):  # laid out to show it all (not the width of an older, shorter text)
            assert title.content_region.width >= cells(title.render().plain)  # type: ignore[union-attr]

        await pilot.press("ctrl+o")  # the key it names opens the newest in view
        await pilot.pause()
        assert not box.collapsed
        assert newest.render().plain == "▼ exit 3 · 6 lines · Ctrl+O to collapse"  # type: ignore[union-attr]
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert box.collapsed and newest.render().plain.endswith(EXPAND_HINT)  # type: ignore[union-attr]


async def test_a_result_arriving_live_names_the_key_at_once(tmp_path):
    """A block already laid out when its result comes: the hint is in the first title drawn."""
    app = make_app(tmp_path)
    c1 = call("c1", "terminal-execute", {"command": "make test"})
    six = "\n".join(f"line {i}" for i in range(6))
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(
            [
                Message(id="u1", role="user", content="go"),
                Message(id="a1", role="assistant", content="", tool_calls=[c1]),
            ]
        )
        await settle(pilot)
        [block] = app.chat.tool_blocks
        block.set_result(command_result("c1", c1.arguments, six, "", 3))
        await settle(pilot)
        await wait_for(pilot, lambda: _titles(app), what="the result")
        [(title, _)] = _titles(app)
        assert title.render().plain == "▶ exit 3 · 6 lines" + EXPAND_HINT  # type: ignore[union-attr]
        assert title.content_region.width >= cells(title.render().plain)  # type: ignore[union-attr]


async def test_a_long_header_goes_on_under_the_name_not_at_the_left_edge(tmp_path):
    app = make_app(tmp_path)
    task = "Find where VERSION is defined and every place that reads it, then list them"
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(
            [
                Message(
                    id="a1",
                    role="assistant",
                    content="",
                    tool_calls=[call("s1", "subagent", {"agent": "explore", "task": task})],
                )
            ]
        )
        await settle(pilot)
        header = app.chat.tool_blocks[0].query_one(".tool-header")
        first, *rest = header.render().plain.split("\n")  # type: ignore[union-attr]
        assert first.startswith("● subagent explore:") and rest
        assert all(line.startswith("  ") and line[2] != " " for line in rest)
        assert all(cells(line) <= header.size.width for line in [first, *rest])


async def test_a_one_line_error_too_long_for_a_title_is_shown_once_and_whole(tmp_path):
    """The walk found it twice: cut as the fold's title, then whole as the open body below."""
    from tests.ui.conftest import chat_text

    invalid = (
        "Error: invalid arguments for filesystem-edit: searchContent: missing required field; "
        "replaceContent: missing required field"
    )
    c1 = call("c1", "filesystem-edit", {"filePath": "app.py"})
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(
            [
                Message(id="u1", role="user", content="edit app"),
                Message(id="a1", role="assistant", content="", tool_calls=[c1]),
                Message(
                    id="r-c1",
                    role="tool",
                    tool_call_id="c1",
                    tool_name="filesystem-edit",
                    content=invalid,
                    status="error",
                ),
            ]
        )
        await settle(pilot)
        [block] = app.chat.tool_blocks
        assert not block.query(Collapsible)  # nothing to open: the header says it all
        flat = " ".join(chat_text(app).split())
        assert flat.count("replaceContent: missing required field") == 1
        assert "searchContent: missing required field;" in flat  # whole, not cut at a title's length
