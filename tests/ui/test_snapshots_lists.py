"""The command lists and the lines issue 46 added, as SVG snapshots at 80×24 and 120×40:
/help read from its top (its commands, not its keys), a /cost- and /status-shaped list whose
long rows wrap under their own text (not back at column 2), and a hook's one dim line. Same
rules as test_snapshots.py: no runtime, no clock; accept a deliberate change with
`--snapshot-update` and look at the pictures."""

from __future__ import annotations

import pytest

from agent.hooks.acted import HookAction
from agent.ui.commands import find
from agent.ui.commands.listing import show_list
from tests.ui.test_snapshots import SIZES, conversation, fixed_home, make_app, settle  # noqa: F401 - autouse

COST_AND_STATUS = """Cost of this session (every branch, subagents included)
  Total cost          price unknown
  Requests            6

By model
  openai/fake-model: price unknown · 6 requests · 8,806 in · 662 out · cache 0 read / 0 written

Status
  session    plan a sha256 default for Signer · 3ed76dbb-ac01-4e18-85d5-a191fa8c8f4c
  config     ~/.cairn/config.toml  (none there)
    1. explore: TASK-A: Find how TimestampSigner checks max_age and what it raises · done · 12s"""


@pytest.mark.parametrize("size", SIZES)
def test_help_opens_at_its_top(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        app = pilot.app
        app.chat.show_history(conversation())
        await settle(pilot)
        command = find("help")
        assert command is not None
        await command.handler(app, "")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_lists_hang_and_a_hook_says_what_it_did(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        app = pilot.app
        show_list(app, COST_AND_STATUS)
        blocked = HookAction("PreToolUse", "bash_guard.py", "blocked", "Use trash instead of rm -rf")
        app.chat.add_notice(blocked.message, kind="info")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
