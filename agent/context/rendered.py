"""A message's API form and token count, and fast copies of a request made of them.

The loop rebuilds the request from the same message objects on every step; turning 5,000
of them into dicts and looking their counts up again dominated a warm build. The
pipeline's per-message records (agent/context/facts.py `Facts`) are `Rendered` entries
that know more; the request builder owning them keeps them between builds.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.session.models import Message


class Rendered:
    __slots__ = ("message", "content", "tool_calls", "api", "encoding", "tokens")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.content = message.content
        self.tool_calls = message.tool_calls
        self.api = message.to_api()
        self.encoding: str | None = None
        self.tokens = 0


CallRow = tuple[int, str, str, str, tuple[tuple[str, str, str], ...]]


def call_rows(calls_at: list[int], calls: list[tuple[tuple[str, str, str], ...]]) -> list[CallRow]:
    """For `copy_request`: one flat row per message with tool calls, `(index, id, name,
    arguments, further calls)`, from their positions and `(id, name, arguments)` tuples."""
    return [(index, *those[0], those[1:]) for index, those in zip(calls_at, calls)]


def copy_request(apis: list[dict[str, Any]], calls_at: list[int], rows: list[CallRow],
                 out: list[dict[str, Any]], start: int = 0, stop: int | None = None) -> None:
    """Append a fresh copy of each of `apis[start:stop]` to `out`; `calls_at` (ascending)
    says which of `apis` have tool calls, `rows` (see `call_rows`) gives them.

    The flat dicts are copied in C; only the nested tool calls take Python code, built
    from flat rows rather than by walking the nested dicts again."""
    stop = len(apis) if stop is None else stop
    base = len(out) - start
    out.extend(map(dict.copy, apis[start:stop] if start or stop < len(apis) else apis))
    for index, call_id, name, arguments, more in rows[bisect_left(calls_at, start):bisect_left(calls_at, stop)]:
        copied = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]
        if more:
            copied += [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                       for call_id, name, arguments in more]
        out[base + index]["tool_calls"] = copied


