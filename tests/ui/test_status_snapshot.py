"""The status bar and the prompt at 80×24 and 120×40 (issue 46 items 12, 18, 20, 26), as SVG
snapshots: a long session title cut with "…", an effort the model is not sent marked
"(not sent)", an unpriced model's "price unknown"; the prompt in shell mode (`!` first: its
border's colour and hint) with a long paste's placeholder, and a queued `!command`. Same
rules as test_snapshots.py: no runtime, no clock; accept a deliberate change with
`--snapshot-update` and look at the pictures."""

from __future__ import annotations

import pytest

from tests.ui.test_snapshots import SIZES, make_app, settle

TITLE = "please explain how the timestamp signer checks max_age and why it fails on old tokens"


@pytest.fixture(autouse=True)
def fixed_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


async def shell_mode(pilot) -> None:
    from textual import events

    app = pilot.app
    app.status.set_info(title=TITLE, effort="high", effort_sent=False, priced=False)
    app.status.set_usage(6_100, 128_000, 0.0, cache_share=0.0)
    app.queued.add("!git status")
    await pilot.press(*"!cat ")
    app.post_message(events.Paste("\n".join(f"line {i}" for i in range(60))))
    await pilot.pause()
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_status_and_shell_prompt(snap_compare, tmp_path, size):
    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=shell_mode)
