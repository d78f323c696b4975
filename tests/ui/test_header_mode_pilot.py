"""Issue 46, item 17: started with `--permission-mode plan`, the first screen's header said
"asks first" while the status bar said "⏸ plan mode". The header names the mode in force, and
follows Shift+Tab."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.header import ASK_MODE, MODE_WORDS, header_text
from tests.ui.conftest import wait_for, wait_ready

SIZE = (80, 24)


def shown(app) -> str:
    return str(app.query_one("#header").content)


async def test_the_header_says_plan_mode_and_follows_shift_tab(make_settings, server):
    app = CairnApp(make_settings(permission_mode="plan"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        header = app.query_one("#header")
        assert header.display
        assert any(w in shown(app) for w in MODE_WORDS["plan"]) and "asks" not in shown(app)
        await pilot.press("shift+tab")  # plan → default
        await wait_for(pilot, lambda: app.runtime.mode == "default", what="the default mode")
        await wait_for(pilot, lambda: "plan mode" not in shown(app) and "asks" in shown(app), what="the header")
        await pilot.press("shift+tab")  # default → accept edits
        await wait_for(pilot, lambda: any(w in shown(app) for w in MODE_WORDS["acceptEdits"]), what="accept edits")


def test_each_mode_fits_80_columns_in_its_short_words():
    from pathlib import Path

    for mode in ("default", "acceptEdits", "plan"):
        line = header_text(Path("/srv/a-rather-long-project-folder"), "openai/gpt-4o", False, width=76, mode=mode)
        first = line.plain.splitlines()[0]
        assert len(first) <= 76
        words = MODE_WORDS.get(mode, (ASK_MODE, "asks first"))
        assert any(w in first for w in words)
