"""Pass 5: tool outputs too large to send inline are cut to their head and tail.

The stored message keeps the whole output; only the request copy is shortened.
"""

from __future__ import annotations

from agent.session.models import Message

NAME = "externalize"


def _shorten(text: str, limit: int, preview: int) -> str:
    head = text[: preview // 2]
    tail = text[-(preview // 2):] if preview > 1 else ""
    omitted = len(text) - len(head) - len(tail)
    return (
        f"{head}\n\n[… output truncated: {len(text):,} characters in all, {omitted:,} omitted from the "
        f"middle. Re-run with a narrower command (grep, head, tail, a line range) to see more …]\n\n{tail}"
    )


def apply(messages: list[Message], *, limit: int, preview: int) -> tuple[list[Message], int]:
    changed = 0
    out: list[Message] = []
    for message in messages:
        if message.role == "tool" and message.content and len(message.content) > limit:
            message = message.model_copy(update={"content": _shorten(message.content, limit, preview)})
            changed += 1
        out.append(message)
    return out, changed
