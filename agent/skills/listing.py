"""A catalog listed under a budget, and searched past it: nothing is dropped silently.

A tool whose description lists what it reaches (the skills `skill-load` loads, the agents
`subagent` runs) sends that list with every request, so the list has a budget; a collection
of hundreds does not fit. Claude Code keeps every name and drops descriptions past its
budget; so does this: entries are listed whole (name and description) in order while they
fit, the rest by name only (a quarter of the budget is kept for those names), and when even
the names do not fit, the count of those left out. A closing line says how many are not
described and how to reach them: by exact name (the tool takes any name, listed or not) and
by a search of every entry's name and description (`search`, the tool's `query` argument).

Pure and deterministic: the same collection gives the same text, so the request's cached
prefix changes only when the collection does. Used by agent/skills/catalog.py and
agent/subagents/definitions.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

NAMES_SHARE = 4  # at most 1/NAMES_SHARE of the budget is held back for the names of the rest
SEARCH_LIMIT = 20
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Entry:
    name: str
    description: str  # as the listing shows it (already cut to the per-entry limit)


def listing(entries: Sequence[Entry], *, max_chars: int, noun: str, reach: str) -> str:
    """One `- name: description` line per entry while they fit in `max_chars`, then the
    others' names, then (when anything is not described) a line saying how many and `reach`
    (how the model finds and uses them)."""
    lines = [f"- {e.name}: {e.description}" for e in entries]
    names_after = [0] * (len(entries) + 1)  # characters the names from i on take in the names line
    for i in range(len(entries) - 1, -1, -1):
        names_after[i] = names_after[i + 1] + len(entries[i].name) + 2
    held_back = max_chars // NAMES_SHARE
    used = 0
    whole = 0
    for i, line in enumerate(lines):
        if used + len(line) + 1 + min(names_after[i + 1], held_back) > max_chars:
            break
        used += len(line) + 1
        whole += 1
    out = lines[:whole]
    named: list[str] = []
    for entry in entries[whole:]:
        if used + len(entry.name) + 2 > max_chars:
            break
        named.append(entry.name)
        used += len(entry.name) + 2
    if named:
        out.append(f"Also available (name only): {', '.join(named)}")
    hidden = len(entries) - whole - len(named)
    if whole < len(entries):
        plural = f"{noun}s"
        not_listed = f", and {hidden} more not listed at all" if hidden else ""
        out.append(
            f"({whole} of the {len(entries)} {plural} are described above, {len(named)} more are named "
            f"only{not_listed}: the list is kept within its budget. {reach})"
        )
    return "\n".join(out)


def search(entries: Sequence[Entry], query: str, *, limit: int = SEARCH_LIMIT) -> list[Entry]:
    """The entries that match `query`'s words best (a word in the name counts more than one in
    the description), best first, ties in the catalog's order; none when no word matches."""
    words = set(_WORD.findall(query.lower()))
    if not words:
        return []
    scored: list[tuple[int, int, Entry]] = []
    for index, entry in enumerate(entries):
        name = entry.name.lower()
        described = set(_WORD.findall(entry.description.lower()))
        score = sum(3 * (word in name) + (word in described) for word in words)
        if score:
            scored.append((-score, index, entry))
    return [entry for _, _, entry in sorted(scored, key=lambda s: (s[0], s[1]))[:limit]]


def found_text(found: Sequence[Entry], *, query: str, total: int, noun: str, use: str) -> str:
    """A search's answer for the model: the matches, whole, and what to do with one."""
    if not found:
        return f"No {noun} matches {query.strip()[:80]!r} (searched the names and descriptions of all {total})."
    lines = [f"- {e.name}: {e.description}" for e in found]
    more = " (the best matches; refine the query for others)" if len(found) >= SEARCH_LIMIT else ""
    return f"{noun.capitalize()}s matching {query.strip()[:80]!r}{more}:\n" + "\n".join(lines) + f"\n\n{use}"
