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
# Keywords whose value maps names to schemas: a key there is a name (a property may be
# called "title"), not a keyword.
NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
# Keywords whose value is data, not a schema: left exactly as the server sent it.
DATA_KEYWORDS = frozenset({"default", "const", "enum", "examples"})


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
    out = without_titles(json.loads(text))
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out, ""


def without_titles(schema: Any) -> Any:
    """`schema` without its `title` keywords (Python servers' generators put the property's
    own name there again, on every property, in every request); property names, enums and
    defaults are kept whatever they are called. Iterative: the depth is bounded already,
    but not by much."""
    root: list[Any] = [schema]
    stack: list[tuple[Any, list[Any] | dict[str, Any], Any]] = [(schema, root, 0)]
    while stack:
        node, parent, slot = stack.pop()
        if isinstance(node, list):
            copy: Any = [None] * len(node)
            stack.extend((item, copy, i) for i, item in enumerate(node))
        elif isinstance(node, dict):
            copy = {}
            for key, value in node.items():
                if key == "title" and isinstance(value, str):
                    continue
                if key in DATA_KEYWORDS:
                    copy[key] = value
                elif key in NAMED_SCHEMAS and isinstance(value, dict):
                    names: dict[str, Any] = dict.fromkeys(value)  # filled below, in the same order
                    copy[key] = names
                    stack.extend((sub, names, name) for name, sub in value.items())
                else:
                    copy[key] = None
                    stack.append((value, copy, key))
        else:
            copy = node
        parent[slot] = copy
    return root[0]


def first_sentence(description: str, limit: int = 120) -> str:
    """The catalog's line for a tool: its description up to the first full stop, bounded."""
    text = " ".join(description.split())
    for end in (". ", ".\n"):
        cut = text.find(end)
        if 0 < cut < limit:
            return text[: cut + 1]
    return text if len(text) <= limit else text[: limit - 1] + "…"
