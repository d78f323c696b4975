"""Copies of a message with new content.

The passes work on records and keep each copy on the record it was made from
(`replaced`: a warm rebuild replaces the same results with the same placeholders again and
finds the copy made last time); code working on messages (smart truncation's file folding,
rare) makes a plain copy with `with_content`. The copies are never mutated.
"""

from __future__ import annotations

from agent.context.facts import Facts
from agent.session.models import Message


def with_content(message: Message, content: str) -> Message:
    return message.model_copy(update={"content": content})


def replaced(facts: Facts, content: str) -> Facts:
    """The record of `facts`' message with `content` instead (remembered on the record)."""
    return facts.copy(content, "content", content)
