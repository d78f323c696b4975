"""A server's tool definition made safe to send: bounded size, depth and description.

A server is untrusted input. Its description reaches the model word for word and its schema
is sent with every request that carries the tool: a megabyte description, a schema nested
hundreds deep (providers refuse those; Python's JSON recursion breaks on them) or one of
several megabytes would cost every request or fail it. Such parts are replaced by a bounded
stand-in that says what happened, and the tool still works: the server validates its own
arguments.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DESCRIPTION_CHARS = 2_000
MAX_SCHEMA_CHARS = 32_000
MAX_SCHEMA_DEPTH = 24
PERMISSIVE_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value, counted iteratively and stopping past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


def bounded_description(text: str | None, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded_schema(schema: Any) -> tuple[dict[str, Any], str]:
    """(a schema safe to send, "" or why the server's was replaced)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return dict(PERMISSIVE_SCHEMA), "its input schema is not a JSON object schema"
    if _depth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        return dict(PERMISSIVE_SCHEMA), f"its input schema is nested deeper than {MAX_SCHEMA_DEPTH} levels"
    try:
        text = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return dict(PERMISSIVE_SCHEMA), "its input schema is not plain JSON"
    if len(text) > MAX_SCHEMA_CHARS:
        return dict(PERMISSIVE_SCHEMA), f"its input schema is {len(text):,} characters (over {MAX_SCHEMA_CHARS:,})"
    out = json.loads(text)
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out, ""


def first_sentence(description: str, limit: int = 120) -> str:
    """The catalog's line for a tool: its description up to the first full stop, bounded."""
    text = " ".join(description.split())
    for end in (". ", ".\n"):
        cut = text.find(end)
        if 0 < cut < limit:
            return text[: cut + 1]
    return text if len(text) <= limit else text[: limit - 1] + "…"
