"""The todo list `todo-write` keeps: how it reads as text, and which list is the current one.

The list lives in the tool result's meta (`meta["todos"]`), so the lossless store keeps every
version and a rewind or a branch switch brings back the list of that point; the current list
is simply the newest one on the active path. A condense summary carries it too
(agent/context/condense.py), so the list outlives the messages the summary replaced.

Standard library only: the TUI's panel reads it before pydantic is loaded, and condense,
the headless stream and ACP read it as well, none of which should import the tool itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TOOL_NAME = "todo-write"
META_KEY = "todos"
STATUSES = ("pending", "in_progress", "completed")
# Plain-text marks for what the model reads: they cost one token and survive any renderer.
MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}

Todo = dict[str, Any]  # {"content", "status"}, plus keys other agents' models send (activeForm, priority, id)


def valid(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("content"), str) and item.get("status") in STATUSES


def completed(todos: list[Todo]) -> int:
    return sum(t["status"] == "completed" for t in todos)


def progress(todos: list[Todo]) -> str:
    """`3/7`: what the panel's title, the chat's tool line and the result text all say."""
    return f"{completed(todos)}/{len(todos)}"


def all_done(todos: list[Todo]) -> bool:
    return bool(todos) and completed(todos) == len(todos)


def as_text(todos: list[Todo]) -> str:
    """The list as the model reads it back (the tool's result, the condense summary)."""
    if not todos:
        return "The todo list is empty."
    lines = [f"{MARKS[t['status']]} {' '.join(t['content'].split())}" for t in todos]
    return "\n".join([*lines, f"{progress(todos)} completed"])


def todos_of(message: Any) -> list[Todo] | None:
    """The list a stored message sets: a successful todo-write result, or a condense summary
    that carried it. None for every other message (it leaves the list as it was)."""
    meta = getattr(message, "meta", None) or {}
    value = meta.get(META_KEY)
    if not isinstance(value, list):
        return None
    is_result = (
        getattr(message, "role", None) == "tool"
        and getattr(message, "tool_name", None) == TOOL_NAME
        and getattr(message, "status", None) == "ok"
    )
    if not is_result and getattr(message, "kind", None) != "summary":
        return None
    return [dict(t) for t in value if valid(t)]


def current_todos(messages: Iterable[Any]) -> list[Todo]:
    """The newest list on `messages` (an active path, oldest first); [] when there is none."""
    for message in reversed(list(messages)):
        found = todos_of(message)
        if found is not None:
            return found
    return []
