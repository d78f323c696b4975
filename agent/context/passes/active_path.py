"""Pass 1: start the request at the newest summary; what it replaces is not sent."""

from __future__ import annotations

from operator import attrgetter

from agent.context.facts import Facts, facts_of
from agent.session.models import Message

NAME = "active_path"
_KIND = attrgetter("kind")


def run(facts: list[Facts]) -> tuple[list[Facts], int]:
    kinds = list(map(_KIND, facts))
    kinds.reverse()
    try:
        index = len(kinds) - 1 - kinds.index("summary")
    except ValueError:
        return facts, 0
    return facts[index:], index


def apply(messages: list[Message]) -> tuple[list[Message], int]:
    facts = facts_of(messages)
    out, changed = run(facts)
    return (messages if out is facts else messages[len(messages) - len(out):]), changed
