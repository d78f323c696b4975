"""The budgeted listing both catalogs use: whole lines, then names, then a count; and its search."""

from __future__ import annotations

from agent.skills.listing import Entry, found_text, listing, search

REACH = "Search with `query`."


def _entries(count: int, description_chars: int) -> list[Entry]:
    return [Entry(f"name-{i:04d}", f"topic{i:04d} " + "x" * (description_chars - 10)) for i in range(count)]


def test_under_the_budget_everything_is_described_and_nothing_is_said():
    entries = _entries(5, 100)
    text = listing(entries, max_chars=10_000, noun="skill", reach=REACH)
    assert text.splitlines() == [f"- {e.name}: {e.description}" for e in entries]


def test_past_names_that_fit_the_rest_are_counted_and_the_reach_is_said():
    entries = _entries(2_000, 300)  # even the names (11 characters each) overflow the budget
    text = listing(entries, max_chars=8_000, noun="agent", reach=REACH)
    lines = text.splitlines()
    whole = [line for line in lines if line.startswith("- ")]
    named = lines[len(whole)].removeprefix("Also available (name only): ").split(", ")
    hidden = 2_000 - len(whole) - len(named)
    assert whole and named and hidden > 0
    assert [w.split(":")[0][2:] for w in whole] + named == [e.name for e in entries[: len(whole) + len(named)]]
    assert lines[-1] == (
        f"({len(whole)} of the 2000 agents are described above, {len(named)} more are named only, and {hidden} "
        f"more not listed at all: the list is kept within its budget. {REACH})"
    )
    assert sum(len(line) + 1 for line in lines[:-1]) <= 8_000 + 40


def test_search_finds_by_name_and_description_best_first():
    entries = [
        Entry("db-migrate", "Runs schema migrations for postgres."),
        Entry("postgres-tuning", "Tunes a slow database."),
        Entry("css", "Styles pages."),
    ]
    assert [e.name for e in search(entries, "postgres")] == ["postgres-tuning", "db-migrate"]
    assert search(entries, "cobol") == [] and search(entries, "  ") == []
    answer = found_text(search(entries, "styles"), query="styles", total=3, noun="skill", use="Load it.")
    assert answer == "Skills matching 'styles':\n- css: Styles pages.\n\nLoad it."
    assert "No skill matches 'cobol'" in found_text([], query="cobol", total=3, noun="skill", use="")
