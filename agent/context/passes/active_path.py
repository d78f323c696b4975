"""Pass 1: start the request at the newest summary; what it replaces is not sent."""

from __future__ import annotations

from operator import attrgetter, is_

from agent.context.facts import Facts, facts_of
from agent.context.state import PassMemory
from agent.session.models import Message

NAME = "active_path"
_KIND = attrgetter("kind")


def run(facts: list[Facts], *, memory: PassMemory) -> tuple[list[Facts], int]:
    """`memory.last`: the last list run on and where its newest summary is (None: it has
    none). The loop's next request is that list plus a few records: only those need looking at."""
    source, index = memory.last or ([], None)
    if source and len(facts) >= len(source) and all(map(is_, source, facts)):
        newer = _newest_summary(facts, len(source))
        index = index if newer is None else newer
    else:
        index = _newest_summary(facts, 0)
    memory.last = (facts, index)
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
    out, changed = run(facts, memory=PassMemory())
    return (messages if out is facts else messages[len(messages) - len(out) :]), changed
