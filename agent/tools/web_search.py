"""`web-search`: the model looks something up (SPEC §13.7, issue 47) and gets titles, URLs and
snippets, then reads a page with `web-fetch`.

Offered only when the user configured a backend (agent/tools/registry.py): `[web] search_url`,
a SearXNG-compatible endpoint (agent/tools/searxng.py), for any model; for a Claude model with
`[web] native_search = true` the request carries Anthropic's server-side search instead
(agent/llm/server_search.py), and this tool is not sent. A search asks no approval: the user
chose the endpoint, the query goes nowhere else, and it reads only, so plan mode runs it too.
Results are inert text, bounded in number and size; the domain filters are applied here
whatever the backend did with them (a single allowed domain is also passed as `site:`).
"""

from __future__ import annotations

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.searxng import SearchError, SearchHit, host_of, search, under

MAX_QUERY_CHARS = 500
MAX_DOMAINS = 20
# Asked of the backend beyond what is returned, so filtered-out hits leave enough behind.
OVERFETCH = 3


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to search for.")
    allowedDomains: list[str] | None = Field(
        default=None, max_length=MAX_DOMAINS, description="Only results from these domains."
    )
    blockedDomains: list[str] | None = Field(
        default=None, max_length=MAX_DOMAINS, description="Never results from these domains."
    )


def kept(hits: list[SearchHit], allowed: list[str], blocked: list[str], limit: int) -> list[SearchHit]:
    """The hits the filters let through (a subdomain counts as its domain), duplicates dropped."""
    out: list[SearchHit] = []
    seen: set[str] = set()
    for hit in hits:
        host = host_of(hit.url)
        if not host or hit.url in seen:
            continue
        if allowed and not any(under(host, d) for d in allowed):
            continue
        if any(under(host, d) for d in blocked):
            continue
        seen.add(hit.url)
        out.append(hit)
        if len(out) == limit:
            break
    return out


def render(query: str, hits: list[SearchHit]) -> str:
    if not hits:
        return f'No results for "{query}".'
    lines = [f'Results for "{query}":']
    for number, hit in enumerate(hits, 1):
        lines += ["", f"{number}. {hit.title}", f"   {hit.url}"] + ([f"   {hit.snippet}"] if hit.snippet else [])
    return "\n".join(lines)


class WebSearch(Tool):
    name = "web-search"
    description = tool_prompt(name)
    Args = SearchArgs

    async def run(self, args: SearchArgs, ctx: ToolContext) -> ToolResult:
        web = ctx.web
        if web is None or not web.search_url:
            raise ToolError("no search backend is configured ([web] search_url in the user's config)")
        query = " ".join(args.query.split())
        allowed = [d for d in args.allowedDomains or [] if d.strip()]
        blocked = [d for d in (args.blockedDomains or []) + list(web.search_blocked_domains) if d.strip()]
        sent = f"{query} site:{allowed[0].strip()}" if len(allowed) == 1 else query
        try:
            hits = await search(web.search_url, sent, timeout=web.timeout)
        except SearchError as exc:
            raise ToolError(str(exc)) from None
        shown = kept(hits, allowed, blocked, web.search_max_results)
        return ToolResult(
            content=render(query, shown),
            meta={"query": query, "results": len(shown), "urls": [h.url for h in shown]},
        )
