"""Each message's API form and token count, remembered per message object across builds.

The loop rebuilds the request from the same message objects on every step; turning 5,000
of them into dicts and looking their counts up again dominated a warm build. An entry is
valid while the message still holds the very same content and tool-call objects (every
writer replaces them rather than editing in place), and it keeps its message alive, so
the object id it is filed under cannot be reused by another object meanwhile.
"""

from __future__ import annotations

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
        if len(_entries) >= CACHE_LIMIT:
            _entries.clear()
        entry = _entries[id(message)] = Rendered(message)
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


def clear() -> None:
    _entries.clear()
