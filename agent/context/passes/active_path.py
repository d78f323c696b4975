"""Pass 1: start the request at the newest summary; what it replaces is not sent."""

from __future__ import annotations

from operator import attrgetter, is_

from agent.context.facts import Facts, facts_of
from agent.session.models import Message

NAME = "active_path"
_KIND = attrgetter("kind")


# The last list run on and where its newest summary is (None: it has none). The loop's
# next request is that list plus a few records: only those need looking at.
_last: tuple[list[Facts], int | None] = ([], None)


def run(facts: list[Facts]) -> tuple[list[Facts], int]:
    global _last
    source, index = _last
    if source and len(facts) >= len(source) and all(map(is_, source, facts)):
        newer = _newest_summary(facts, len(source))
        index = index if newer is None else newer
    else:
        index = _newest_summary(facts, 0)
    _last = (facts, index)
    if not index:  # none, or the first record: everything is sent
        return facts, 0
    return facts[index:], index


def _newest_summary(facts: list[Facts], start: int) -> int | None:
    kinds = list(map(_KIND, facts[start:]))
    kinds.reverse()
    try:
        return len(facts) - 1 - kinds.index("summary")
    except ValueError:
        return None


def apply(messages: list[Message]) -> tuple[list[Message], int]:
    facts = facts_of(messages)
    out, changed = run(facts)
    return (messages if out is facts else messages[len(messages) - len(out):]), changed
