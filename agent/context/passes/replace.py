"""Copies of a message with new content, reused across builds.

A warm rebuild replaces the same results with the same placeholders again; reusing the
copies made last time keeps that from costing a pydantic copy per result per request.
The passes work on records and keep each copy on the record it was made from
(`replaced`); code working on messages (smart truncation's file folding) uses
`with_content`. The copies are never mutated (the pipeline only reads them).
"""

from __future__ import annotations

from agent.context.facts import Facts
from agent.session.models import Message

CACHE_LIMIT = 100_000
_copies: dict[tuple, Message] = {}


def with_content(message: Message, content: str) -> Message:
    key = (message.id, message.status, hash(message.content), content)
    copy = _copies.get(key)
    if copy is None:
        if len(_copies) >= CACHE_LIMIT:
            _copies.clear()
        copy = _copies[key] = message.model_copy(update={"content": content})
    return copy


def replaced(facts: Facts, content: str) -> Facts:
    """The record of `facts`' message with `content` instead (remembered on the record)."""
    return facts.copy(content, "content", content)
