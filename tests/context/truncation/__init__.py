"""Smart truncation tests. Helpers: a count with exact small numbers and message builders."""

from __future__ import annotations

import json

from agent.session.models import Message, ToolCall


def count(message: Message) -> int:
    """Tokens for the worked examples: a quarter of the characters plus 3 of framing."""
    return len(message.content or "") // 4 + 3


def text(tokens: int, fill: str = "x") -> str:
    """Content that `count` prices at exactly `tokens` (≥ 3)."""
    return fill * (4 * (tokens - 3))


def user(tokens: int = 10, *, id: str | None = None) -> Message:
    return Message(role="user", content=text(tokens), **({"id": id} if id else {}))


def say(tokens: int = 10, *, id: str | None = None) -> Message:
    return Message(role="assistant", content=text(tokens), **({"id": id} if id else {}))


def calls(*specs: tuple[str, str], content: str | None = None) -> Message:
    """An assistant message calling (id, tool name) pairs."""
    made = []
    for call_id, name in specs:
        args = json.dumps({"filePath": f"{call_id}.py"} if name == "filesystem-read" else {"command": "make"})
        made.append(ToolCall(id=call_id, name=name, arguments=args))
    return Message(role="assistant", content=content, tool_calls=made)


def result(call_id: str, content: str = "out", *, name: str = "terminal-execute", status: str = "ok") -> Message:
    return Message(role="tool", tool_call_id=call_id, tool_name=name, content=content, status=status)


def read_result(call_id: str, path: str, lines: int = 50) -> Message:
    """A `filesystem-read` result in the tool's format."""
    body = "\n".join(f"{n}→line {n} of {path}" for n in range(1, lines + 1))
    return result(call_id, f"📄 {path} (lines 1-{lines}/{lines})\n{body}", name="filesystem-read")


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]
