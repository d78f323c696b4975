"""README.md's "Keys" table is the app's bindings: same keys, same words, nothing missing."""

from __future__ import annotations

from tests.conftest import REPO_ROOT

NAMES = {
    "escape": "Esc",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "enter": "Enter",
    "tab": "Tab",
    "up": "Up",
    "down": "Down",
    "home": "Home",
    "end": "End",
}


def shown_key(key: str) -> str:
    """`ctrl+home` → `Ctrl+Home`, as the README writes keys."""
    parts = key.split("+")
    last = parts[-1] if len(parts) == 1 else parts[-1].upper() if len(parts[-1]) == 1 else parts[-1]
    return (
        "+".join(NAMES.get(part, part.capitalize()) for part in parts[:-1])
        + ("+" if len(parts) > 1 else "")
        + NAMES.get(last, last if len(last) == 1 else last.capitalize())
    )


def bindings() -> set[tuple[str, str, str]]:
    """(where, keys, description) of every binding that has a description."""
    from agent.ui.keys import APP_BINDINGS
    from agent.ui.screens.approval import ApprovalScreen
    from agent.ui.screens.plan_review import PlanReviewScreen
    from agent.ui.widgets.prompt import PromptInput

    rows = set()
    for where, group in (
        ("anywhere", APP_BINDINGS),
        ("prompt", PromptInput.BINDINGS),
        ("approval", ApprovalScreen.BINDINGS),
        ("plan review", PlanReviewScreen.BINDINGS),
    ):
        for b in group:
            if b.description:
                rows.add((where, " / ".join(shown_key(k.strip()) for k in b.key.split(",")), b.description))
    return rows


def readme_rows() -> set[tuple[str, str, str]]:
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("\n### Keys\n", 1)[1].split("\n#", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("Where", "") and not set(cells[0]) <= set("-: "):
            where, keys, what = cells
            rows.add((where, keys.replace("`", ""), what))
    return rows


def test_readme_keys_table_matches_the_bindings():
    assert readme_rows() == bindings()


def test_help_names_every_key_that_works_anywhere():
    """/help once left out Ctrl+O, PageUp/PageDown and Ctrl+Home/End."""
    from agent.ui.commands import help_text
    from agent.ui.keys import APP_BINDINGS

    shown = help_text()
    for binding in APP_BINDINGS:
        if binding.description:
            for key in binding.key.split(","):
                assert shown_key(key.strip()) in shown, key
