"""Issue 18 bug 10: the first screen (agent/ui/early.py, drawn before Textual loads) wraps
the typed text exactly as the app's prompt does, and its box has the same size and place,
so the first frame does not jump when the app takes over. Checked against the real
TextArea at 80×24 and 120×40."""

from __future__ import annotations

import pytest

from agent.ui.early import PROMPT_CHROME, TypeAhead, prompt_rows
from tests.ui.conftest import wait_for
from tests.ui.test_snapshots import SnapshotApp

TEXTS = [
    "fix the failing test in tests/test_parse.py and explain what went wrong with the generics " * 2,
    "a " * 70,
    "short first line\n" + "averyveryverylongwordwithoutanyspacesatall" * 3 + " then words after it",
    "line\n\nwith an empty line between and a trailing space ",
    "\n".join(f"line {i} of a long paste that goes on past the edge of an eighty column terminal" for i in range(14)),
    "日本語のテキストも折り返す " * 8,
]


def app_rows(prompt) -> list[str]:
    """The rows the TextArea shows, scrolled as it is (top to bottom)."""
    doc = prompt.wrapped_document
    rows = [section.rstrip("\n") for line in range(prompt.document.line_count) for section in doc.get_sections(line)]
    top = round(prompt.scroll_offset.y)
    return rows[top : top + prompt.scrollable_content_region.height]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
async def test_early_rows_match_the_prompt(make_settings, size, text):
    app = SnapshotApp(make_settings())  # no runtime: only the prompt matters
    app.typeahead = TypeAhead(text)
    width, height = size
    async with app.run_test(size=size) as pilot:
        prompt = app.prompt
        await wait_for(pilot, lambda: prompt.text == text, what="the type-ahead in the prompt")
        await pilot.pause()
        early = prompt_rows(text, width - PROMPT_CHROME)
        assert app_rows(prompt) == early
        # Same box: its top border row and its height (rows + 2 borders), above the status line.
        assert prompt.region.height == len(early) + 2
        assert prompt.region.y == height - 2 - len(early) - 1  # early's 1-based top row, 0-based
