"""Pass 1: start the request at the newest summary; what it replaces is not sent."""

from __future__ import annotations

from agent.session.models import Message

NAME = "active_path"


def apply(messages: list[Message]) -> tuple[list[Message], int]:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].kind == "summary":
            return messages[index:], index
    return messages, 0
