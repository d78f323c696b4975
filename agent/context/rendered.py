"""Each message's API form and token count, remembered per message object across builds.

The loop rebuilds the request from the same message objects on every step; turning 5,000
of them into dicts and looking their counts up again dominated a warm build. An entry is
valid while the message still holds the very same content and tool-call objects (every
writer replaces them rather than editing in place), and it keeps its message alive, so
the object id it is filed under cannot be reused by another object meanwhile. The
pipeline files its per-message records here too (agent/context/facts.py `Facts`, a
`Rendered` that knows more), so each message has one entry.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.session.models import Message

CACHE_LIMIT = 300_000


class Rendered:
    __slots__ = ("message", "content", "tool_calls", "api", "encoding", "tokens")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.content = message.content
        self.tool_calls = message.tool_calls
        self.api = message.to_api()
        self.encoding: str | None = None
        self.tokens = 0


_entries: dict[int, Rendered] = {}


def valid_entry(message: Message) -> Rendered | None:
    """The entry of `message` if it is still valid (the warm path: no allocation)."""
    entry = _entries.get(id(message))
    if (entry is not None and entry.message is message and entry.content is message.content
            and entry.tool_calls is message.tool_calls):
        return entry
    return None


def rendered(message: Message) -> Rendered:
    entry = valid_entry(message)
    if entry is None:
        entry = remember(Rendered(message))
    return entry


def remember(entry: Rendered) -> Rendered:
    """File `entry` (a subclass may carry more, see agent/context/facts.py) under its message."""
    if len(_entries) >= CACHE_LIMIT:
        _entries.clear()
    _entries[id(entry.message)] = entry
    return entry


def api_copy(message: Message) -> dict[str, Any]:
    """A fresh dict for the request (callers such as provider adapters may edit theirs)."""
    return copy_api((valid_entry(message) or rendered(message)).api)


def copy_api(api: dict[str, Any]) -> dict[str, Any]:
    if "tool_calls" not in api:
        return api.copy()
    out = api.copy()
    out["tool_calls"] = [
        {"id": tc["id"], "type": "function",
         "function": {"name": tc["function"]["name"], "arguments": tc["function"]["arguments"]}}
        for tc in api["tool_calls"]
    ]
    return out


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


def clear() -> None:
    _entries.clear()
