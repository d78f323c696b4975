"""Tool names the providers accept: `mcp__<server>__<tool>`, sanitised.

OpenAI and Anthropic accept `^[a-zA-Z0-9_-]{1,64}$` (the strictest common rule). A server
chooses its tool names, so a name is cleaned, cut to fit, and made unique with a short hash
of the original when cleaning or cutting made two names collide.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME_CHARS = 64
HASH_CHARS = 6
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]+")


def clean(part: str) -> str:
    """Characters a provider refuses become `_`; never empty."""
    return _NOT_ALLOWED.sub("_", part).strip("_") or "x"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]


def tool_name(server: str, tool: str) -> str:
    """The name the model sees for `tool` of `server` (before de-duplication)."""
    name = f"{PREFIX}{clean(server)}{SEPARATOR}{clean(tool)}"
    if len(name) <= MAX_NAME_CHARS and name == f"{PREFIX}{server}{SEPARATOR}{tool}":
        return name
    if len(name) > MAX_NAME_CHARS:  # keep the start, mark it with the original's hash
        name = name[: MAX_NAME_CHARS - HASH_CHARS - 1] + "_" + _digest(f"{server}\0{tool}")
    return name


def unique_names(server: str, tools: list[str]) -> dict[str, str]:
    """{original tool name: exposed name}, every exposed name distinct (a cleaned name that
    collides with another gets the original's hash)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for tool in tools:
        name = tool_name(server, tool)
        if name in used:
            base = name[: MAX_NAME_CHARS - HASH_CHARS - 1]
            name = f"{base}_{_digest(f'{server}{chr(0)}{tool}')}"
            n = 2
            while name in used:  # a hash collision too: count on
                name = f"{base[: -len(str(n))]}{n}_{_digest(tool)}"
                n += 1
        used.add(name)
        out[tool] = name
    return out


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX)
