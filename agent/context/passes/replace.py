"""Copies of a message with new content, shared by the passes and reused across builds.

A warm rebuild replaces the same results with the same placeholders again; reusing the
copies made last time keeps that from costing a pydantic copy per result per request.
The copies are never mutated (the pipeline only reads them).
"""

from __future__ import annotations

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
