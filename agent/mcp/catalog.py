"""Which MCP tool definitions a request carries: all of them, or the catalog (seed 004).

Under `mcp.inline_tool_tokens` of MCP definitions every MCP tool is sent as it is. Above it
the request carries the `mcp-tool-schema` loader, whose description lists one compact line
per MCP tool (name and first sentence), plus the schemas the model loaded. Within a
session the list only grows, in a deterministic order, so a provider's prompt cache keeps
its prefix: a tool once sent stays (first-sent order), newly sent ones are appended sorted
by name, and the catalog lines list every tool, loaded or not. The only shrink is a
server that failed or was stopped: its tools cannot be called any more.

`CatalogState` is owned by the session's RequestBuilder (agent/context/builder.py); the
tools loaded are read from the history (the loader's results), so a resumed session loads
them back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.mcp.loader import DESCRIPTION, LOADED_META, LOADER_NAME
from agent.mcp.names import is_mcp_name
from agent.mcp.schema import first_sentence

CATALOG_HEADER = "MCP tools (load before calling):"


@dataclass
class CatalogState:
    """What this session's requests sent and loaded (grow-only), and a memo of token counts."""

    sent: dict[str, None] = field(default_factory=dict)  # an ordered set
    loaded: dict[str, None] = field(default_factory=dict)
    scanned: int = 0  # history messages read for loader results
    scanned_last_id: str | None = None
    _count_memo: tuple[tuple[int, ...], list[dict[str, Any]], int] | None = None

    def read_history(self, history: list[Any]) -> None:
        """Note the tools loaded by `mcp-tool-schema` results in messages not read before (all
        of them again when the history is not the one read last: a rewind, a new head)."""
        start = self.scanned
        if start > len(history) or (start and history[start - 1].id != self.scanned_last_id):
            start = 0
        for message in history[start:]:
            if message.role == "tool" and message.tool_name == LOADER_NAME and message.status == "ok":
                for name in (message.meta or {}).get(LOADED_META) or []:
                    if isinstance(name, str):
                        self.loaded.setdefault(name)
        self.scanned = len(history)
        self.scanned_last_id = history[-1].id if history else None

    def tokens_of(self, definitions: list[dict[str, Any]], count: Callable[[list[dict[str, Any]]], int]) -> int:
        key = tuple(id(d) for d in definitions)
        if self._count_memo is not None and self._count_memo[0] == key:
            return self._count_memo[2]
        tokens = count(definitions)
        self._count_memo = (key, definitions, tokens)  # the list is held so its ids stay unique
        return tokens


def _name(definition: dict[str, Any]) -> str:
    return str(definition.get("function", {}).get("name", ""))


def catalog_lines(definitions: list[dict[str, Any]]) -> str:
    rows = sorted((_name(d), first_sentence(str(d.get("function", {}).get("description") or ""))) for d in definitions)
    return "\n".join(f"- {name}: {line}" if line else f"- {name}" for name, line in rows)


def loader_definition(base: dict[str, Any], definitions: list[dict[str, Any]]) -> dict[str, Any]:
    function = dict(base.get("function", {}))
    # What the loader's own description adds after DESCRIPTION (the servers' instructions) follows the lines.
    after = str(function.get("description") or DESCRIPTION).removeprefix(DESCRIPTION)
    function["description"] = f"{DESCRIPTION}\n\n{CATALOG_HEADER}\n{catalog_lines(definitions)}{after}"
    return {**base, "function": function}


def request_tools(
    state: CatalogState,
    definitions: list[dict[str, Any]],
    *,
    inline_tokens: int,
    count: Callable[[list[dict[str, Any]]], int],
) -> list[dict[str, Any]]:
    """The tools of the next request, from the registry's full definitions."""
    base: list[dict[str, Any]] = []
    remote: list[dict[str, Any]] = []
    loader: dict[str, Any] | None = None
    for definition in definitions:
        name = _name(definition)
        if name == LOADER_NAME:
            loader = definition
        elif is_mcp_name(name):
            remote.append(definition)
        else:
            base.append(definition)
    if not remote:
        return base
    by_name = {_name(d): d for d in remote}
    inline = state.tokens_of(remote, count) <= inline_tokens or loader is None
    wanted = by_name if inline else [n for n in state.loaded if n in by_name]
    for name in sorted(n for n in wanted if n not in state.sent):
        state.sent.setdefault(name)
    chosen = [by_name[n] for n in state.sent if n in by_name]
    if inline:
        return base + chosen
    assert loader is not None  # not inline: there is a loader
    return base + [loader_definition(loader, remote)] + chosen
