"""A SearXNG-compatible search endpoint: one GET, its JSON read into bounded results.

Apart from the tool (agent/tools/web_search.py) because it is the protocol: `GET
{search_url}/search?q=…&format=json`, answered by `{"results": [{"title", "url", "content"}]}`
(SearXNG's JSON API; other engines behind a shim speak it too). The endpoint is the user's
own setting (`[web] search_url`, a widening key a project sets only once trusted), so unlike
web-fetch it is not held to public addresses: a SearXNG on localhost is the usual set-up.
What the server sends is data from outside: the body is read up to a cap, redirects are not
followed (the query goes only where the config says), and every field is cut to a bound.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from pydantic import BaseModel

from agent.fs.terminal_text import inert

# Of the answer's body; a search page of results is tens of kilobytes.
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_TITLE_CHARS = 200
MAX_URL_CHARS = 500
MAX_SNIPPET_CHARS = 400
USER_AGENT = "cairn-web-search/0.1 (+terminal coding agent)"


class SearchError(Exception):
    """The backend could not answer: down, slow, not JSON, an HTTP error."""


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def under(host: str, domain: str) -> bool:
    """`host` is `domain` or one of its subdomains (`docs.python.org` is under `python.org`)."""
    domain = domain.lower().strip().lstrip("*.").rstrip(".")
    return bool(domain) and (host == domain or host.endswith("." + domain))


def _clip(value: object, limit: int) -> str:
    text = inert(" ".join(value.split())) if isinstance(value, str) else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_results(body: bytes) -> list[SearchHit]:
    """The hits of a SearXNG JSON answer, each field one bounded line; entries without an
    http(s) URL are left out."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise SearchError("the search backend did not answer JSON (is `format=json` on in its settings?)") from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise SearchError("the search backend's answer has no `results` list")
    hits = []
    for item in results:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")) or len(url) > MAX_URL_CHARS:
            continue
        if not url.isprintable() or " " in url:
            continue
        hits.append(
            SearchHit(
                title=_clip(item.get("title"), MAX_TITLE_CHARS) or url,
                url=url,
                snippet=_clip(item.get("content"), MAX_SNIPPET_CHARS),
            )
        )
    return hits


async def search(search_url: str, query: str, *, timeout: float) -> list[SearchHit]:
    """One query to the endpoint; SearchError for anything but a JSON page of results."""
    import httpx

    endpoint = search_url.rstrip("/") + "/search"
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "GET",
                endpoint,
                params={"q": query, "format": "json"},
                headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            ) as response,
        ):
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise SearchError(f"the search backend's answer passed {MAX_BODY_BYTES // 1024 // 1024} MiB")
            status = response.status_code
    except httpx.TimeoutException:
        raise SearchError(f"the search backend at {search_url} did not answer within {timeout:g} s") from None
    except (httpx.HTTPError, ValueError) as exc:
        raise SearchError(f"cannot reach the search backend at {search_url}: {type(exc).__name__}: {exc}") from None
    if status != 200:
        raise SearchError(f"the search backend answered HTTP {status}")
    return parse_results(bytes(body))
