"""Anthropic's server-side web search (SPEC §13.7): the tool it is offered as, the blocks it
leaves in an answer, what it costs.

With `[web] native_search = true` a request to a protocol that runs it (Anthropic's Messages
API, agent/llm/anthropic_wire.py) carries `web_search_20250305` in place of cairn's own
`web-search` tool; Claude searches on Anthropic's servers inside the one request, and the
answer holds `server_tool_use` blocks (the query) each followed by its `web_search_tool_result`
(titles, URLs and encrypted page content). Those are kept on the assistant message as they
came (`meta["server_blocks"]`, agent/turn/stream_writer.py) and sent back byte for byte after
its thinking (agent/llm/anthropic_messages.py), as the API requires in later requests. A
request that does not carry the search tool (another model, the setting turned off) gets
none of them: the message's text stands alone. Each search is billed (`usage.server_tool_use.
web_search_requests`) at the price map's per-query price, else Anthropic's published $10 per
1,000. Where no protocol runs it and `[web] search_url` is unset, `web-search` is not offered.

Pure functions, standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.settings.schema import WebSettings

NATIVE_TOOL_TYPE = "web_search_20250305"
NATIVE_TOOL_NAME = "web_search"
CLIENT_TOOL_NAME = "web-search"  # agent/tools/web_search.py: what native search stands in for
META_SERVER_BLOCKS = "server_blocks"
USE_BLOCK = "server_tool_use"
RESULT_BLOCK = "web_search_tool_result"
SERVER_BLOCK_TYPES = frozenset({USE_BLOCK, RESULT_BLOCK})
# Anthropic's price of a search, when the price map has none for the model: $10 per 1,000.
SEARCH_USD = 0.01
MAX_SHOWN_QUERY_CHARS = 80


@dataclass(frozen=True)
class NativeSearch:
    """`[web] native_search` as a request carries it: the server tool's definition, and whether
    cairn's own `web-search` has a backend of its own (`search_url`) where the tool cannot run."""

    tool: dict[str, Any] = field(default_factory=dict)
    client_backend: bool = False


def native_search(web: WebSettings) -> NativeSearch | None:
    if not web.native_search:
        return None
    tool: dict[str, Any] = {"type": NATIVE_TOOL_TYPE, "name": NATIVE_TOOL_NAME, "max_uses": web.native_max_uses}
    if web.search_blocked_domains:
        tool["blocked_domains"] = list(web.search_blocked_domains)
    return NativeSearch(tool=tool, client_backend=bool(web.search_url))


def _name(tool: dict[str, Any]) -> str:
    function = tool.get("function")
    return str(function.get("name") or "") if isinstance(function, dict) else ""


def offered(
    tools: list[dict[str, Any]], native: NativeSearch | None, *, runs_server_search: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(cairn's tools, server tools) for one request: native search in place of `web-search`
    where the protocol runs it; elsewhere `web-search` only when it has a backend of its own."""
    if native is None:
        return tools, []
    if runs_server_search:
        return [t for t in tools if _name(t) != CLIENT_TOOL_NAME], [dict(native.tool)]
    if native.client_backend:
        return tools, []
    return [t for t in tools if _name(t) != CLIENT_TOOL_NAME], []


def without_server_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` for a request that carries no server search: the stored blocks left out."""
    if not any(META_SERVER_BLOCKS in m for m in messages):
        return messages
    return [{k: v for k, v in m.items() if k != META_SERVER_BLOCKS} if META_SERVER_BLOCKS in m else m for m in messages]


def paired(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks the API takes back: each `server_tool_use` with its result (an answer cut
    between the two would make every later request invalid), in the order they came."""
    results = {b.get("tool_use_id") for b in blocks if b.get("type") == RESULT_BLOCK}
    uses = {b.get("id") for b in blocks if b.get("type") == USE_BLOCK}
    return [
        b
        for b in blocks
        if (b.get("type") == USE_BLOCK and b.get("id") in results)
        or (b.get("type") == RESULT_BLOCK and b.get("tool_use_id") in uses)
    ]


def searched(blocks: list[dict[str, Any]]) -> list[str]:
    """One line per search for the user: `searched: QUERY · N results` (or the error code)."""
    results = {b.get("tool_use_id"): b.get("content") for b in blocks if b.get("type") == RESULT_BLOCK}
    lines = []
    for block in blocks:
        if block.get("type") != USE_BLOCK:
            continue
        arguments = block.get("input")
        query = str(arguments.get("query") or "") if isinstance(arguments, dict) else ""
        query = " ".join(query.split())
        if len(query) > MAX_SHOWN_QUERY_CHARS:
            query = query[: MAX_SHOWN_QUERY_CHARS - 1] + "…"
        content = results.get(block.get("id"))
        if isinstance(content, list):
            count = len(content)
            outcome = f"{count} result{'' if count == 1 else 's'}"
        elif isinstance(content, dict):
            outcome = f"failed ({content.get('error_code') or 'error'})"
        else:
            outcome = "no result"
        lines.append(f"searched: {query} · {outcome}")
    return lines


def search_cost(per_query: float | None, requests: int) -> float:
    """USD of `requests` searches at the price map's `per_query` price (None: Anthropic's)."""
    return max(requests, 0) * (SEARCH_USD if per_query is None else per_query)
