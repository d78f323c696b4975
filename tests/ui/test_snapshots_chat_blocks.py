"""Snapshots of the chat's blocks as issue 46 left them, at 80×24 and 120×40: a code block's
long line wrapped whole (item 14), and an older tool block selected with Ctrl+↑ (item 1: its
marker, its "Ctrl+O to expand", the others' "Ctrl+↑/Ctrl+↓ to select"). Same rules as
tests/ui/test_snapshots.py; accept a deliberate change with `--snapshot-update`."""

from __future__ import annotations

import pytest

from agent.session.models import Message
from tests.ui.conftest import wait_for
from tests.ui.test_block_select_pilot import four_blocks
from tests.ui.test_code_wrap_pilot import CODE
from tests.ui.test_snapshots import SIZES, fixed_home, make_app, settle  # noqa: F401 - autouse


@pytest.mark.parametrize("size", SIZES)
def test_long_code_line_wraps(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        pilot.app.chat.show_history(
            [Message(id="u1", role="user", content="how do I sign?"), Message(id="a1", role="assistant", content=CODE)]
        )
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_selected_block(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        app = pilot.app
        app.chat.show_history(four_blocks())
        await settle(pilot)
        await pilot.press("ctrl+up")
        tests = app.chat.tool_blocks[2]
        await wait_for(pilot, lambda: tests.has_class("selected-block"), what="the pytest block selected")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
