"""`web-fetch`: GET a URL and return the page as Markdown (SPEC §8, issue 19).

Fetching sends data out (the URL itself can carry what the model read) and reaches
whatever the machine can reach, so: http and https only; the user approves each host
(once, this session, or `fetch:<host>` / `fetch:*.<domain>` rules in `[permissions]`), and
a redirect to another host is approved on its own; connections go only to public addresses
unless the user's `[web] allow_private` says otherwise (agent/tools/web_guard.py checks
every resolved address at connect time, every hop). The body read is capped
(`[web] max_bytes`), the whole fetch has a time limit (network time only: the user's
approval is not counted), and the answer is capped at `maxChars`. A page longer than the
inline limit reaches the model as a context file like any large tool output (the
externalize pass), so it can grep it instead of reading it whole.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.fetch_rules import fetch_key
from agent.tools.permissions import ApprovalRequest

DEFAULT_MAX_CHARS = 100_000
MAX_CHARS = 1_000_000
MAX_REDIRECTS = 5
MAX_URL_CHARS = 8192
READ_CHUNK_BYTES = 64 * 1024
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "cairn-web-fetch/0.1 (+terminal coding agent)"
ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5"
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
)


class FetchArgs(ToolArgs):
    url: str = Field(description="The http or https URL to fetch.")
    maxChars: int = Field(
        default=DEFAULT_MAX_CHARS, ge=1000, le=MAX_CHARS, description="Return at most this many characters of the page."
    )


@dataclass
class Page:
    url: Any  # httpx.URL, after redirects
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    cut: bool  # the body was longer than max_bytes
    headers: dict[str, str] = field(default_factory=dict)


def _parse_url(raw: str):
    import httpx

    text = raw.strip()
    if len(text) > MAX_URL_CHARS:
        raise ToolError(f"the URL is too long ({len(text)} characters, at most {MAX_URL_CHARS})")
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise ToolError(f"invalid URL {text[:200]!r}: {exc}") from None
    if url.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {url.scheme or 'a relative URL'!r}")
    if not url.host:
        raise ToolError(f"the URL {text[:200]!r} has no host")
    if url.userinfo:
        raise ToolError("URLs with a user name or password are not fetched")
    return url.copy_with(fragment=None)


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1").strip()
    return ""


def _media_type(content_type: str) -> tuple[str, str | None]:
    parts = [p.strip() for p in content_type.split(";")]
    charset = next((p.split("=", 1)[1].strip("\"' ") for p in parts[1:] if p.lower().startswith("charset=")), None)
    return parts[0].lower(), charset or None


async def _read_capped(response, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of the body (decompressed if the server compressed it anyway)."""
    encoding = _header(response.headers, b"content-encoding").lower()
    if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise ToolError(f"the server sent the page compressed as {encoding!r}, which web-fetch cannot read")
    inflate = (
        zlib.decompressobj(16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS)
        if encoding not in ("", "identity")
        else None
    )
    body = bytearray()
    async for chunk in response.aiter_stream():
        if inflate is not None:
            try:  # max_length: a small compressed bomb cannot expand past the cap
                chunk = inflate.decompress(chunk, max_bytes + 1 - len(body))
            except zlib.error:
                raise ToolError("the server sent a corrupt compressed body") from None
        body += chunk
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True
    return bytes(body), False


class WebFetch(Tool):
    name = "web-fetch"
    description = tool_prompt(name)
    Args = FetchArgs

    async def run(self, args: FetchArgs, ctx: ToolContext) -> ToolResult:
        web = _web_settings(ctx)
        url = _parse_url(args.url)
        page = await self._fetch(url, ctx, web)
        return await asyncio.to_thread(_result, page, str(url), args.maxChars, web.max_bytes)

    async def _fetch(self, url, ctx: ToolContext, web) -> Page:
        import httpcore

        from agent.tools.web_guard import AddressRefused, GuardedBackend, check_addresses, resolve

        approved: set[str] = set()
        left = web.timeout
        pool = httpcore.AsyncConnectionPool(
            network_backend=GuardedBackend(allow_private=web.allow_private),
            ssl_context=_ssl_context(),
            max_connections=2,
            retries=0,
        )
        async with pool:
            for _ in range(MAX_REDIRECTS + 1):
                if url.host not in approved:
                    try:  # refused before anyone is asked; connect_tcp checks again, for real
                        check_addresses(
                            url.host,
                            await asyncio.wait_for(resolve(url.host, _port(url)), left),
                            allow_private=web.allow_private,
                        )
                    except AddressRefused as exc:
                        raise ToolError(str(exc)) from None
                    except TimeoutError:
                        raise ToolError(f"resolving {url.host} timed out") from None
                    await _approve(url, ctx)
                    approved.add(url.host)
                started = time.monotonic()
                try:
                    page = await asyncio.wait_for(_get(pool, url, web.max_bytes), left)
                except TimeoutError:
                    raise ToolError(f"fetching {url} timed out after {web.timeout:g} s") from None
                except AddressRefused as exc:
                    raise ToolError(str(exc)) from None
                except httpcore.TimeoutException:
                    raise ToolError(f"fetching {url} timed out") from None
                except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
                    raise ToolError(f"cannot fetch {url}: {type(exc).__name__}: {exc or 'connection failed'}") from None
                left -= time.monotonic() - started
                location = page.headers.get("location")
                if page.status not in REDIRECT_STATUSES or not location:
                    return page
                try:
                    url = _parse_url(str(url.join(location)))
                except ToolError as exc:
                    raise ToolError(f"{url} redirects to {location[:200]!r}, which is not fetched: {exc}") from None
            raise ToolError(f"more than {MAX_REDIRECTS} redirects; last {url}")


def _port(url) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


async def _get(pool, url, max_bytes: int) -> Page:
    import httpcore

    target = httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path)
    headers = [
        (b"Host", url.netloc),
        (b"User-Agent", USER_AGENT.encode()),
        (b"Accept", ACCEPT.encode()),
        (b"Accept-Encoding", b"gzip, deflate, identity"),
    ]
    async with pool.stream("GET", target, headers=headers) as response:
        content_type, charset = _media_type(_header(response.headers, b"content-type"))
        location = _header(response.headers, b"location")
        if response.status in REDIRECT_STATUSES and location:
            body, cut = b"", False
        else:
            body, cut = await _read_capped(response, max_bytes)
        reason = response.extensions.get("reason_phrase", b"")
        return Page(
            url=url,
            status=response.status,
            reason=reason.decode("latin-1", "replace"),
            content_type=content_type,
            charset=charset,
            body=body,
            cut=cut,
            headers={"location": location} if location else {},
        )


async def _approve(url, ctx: ToolContext) -> None:
    request = ApprovalRequest(
        tool=WebFetch.name, kind="fetch", key=fetch_key(url.host), title=f"Fetch from {url.host}", detail=str(url)
    )
    if not await ctx.permissions.check(request):
        raise ToolError(f"fetching {url} was not approved")


def _ssl_context():
    import ssl

    return ssl.create_default_context()


def _web_settings(ctx: ToolContext):
    """The loop's `[web]` settings; when a context was built without them, this workspace's
    (user config, and the project's only as agent/settings/config.py lets it)."""
    if ctx.web is not None:
        return ctx.web
    from agent.settings.config import load_settings

    return load_settings(ctx.workspace).web


def _is_text(content_type: str) -> bool:
    return content_type.startswith(TEXT_TYPES) or content_type.endswith(("+json", "+xml"))


def _result(page: Page, asked: str, max_chars: int, max_bytes: int) -> ToolResult:
    from agent.tools.html_markdown import html_to_markdown

    looks_html = page.content_type in ("text/html", "application/xhtml+xml") or (
        not page.content_type and page.body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))
    )
    readable = looks_html or _is_text(page.content_type) or (not page.content_type and b"\0" not in page.body[:8192])
    if looks_html:
        title, text = html_to_markdown(page.body, encoding=page.charset)
    elif readable:
        title, text = "", page.body.decode(page.charset or "utf-8", errors="replace")
    if page.status >= 400:
        excerpt = text.strip()[:500] if readable else ""
        raise ToolError(f"HTTP {page.status} {page.reason} from {page.url}" + (f"\n{excerpt}" if excerpt else ""))
    if not readable:
        raise ToolError(
            f"{page.url} is {page.content_type or 'binary content'} ({len(page.body):,} bytes"
            f"{' or more' if page.cut else ''}); web-fetch returns only web pages and text"
        )
    header = [f"URL: {page.url}"] + ([f"Title: {title}"] if title else [])
    if str(page.url) != asked:
        header.append(f"(redirected from {asked[:500]})")
    notes = []
    if len(text) > max_chars:
        notes.append(f"[cut at {max_chars:,} of {len(text):,} characters; call again with a larger maxChars for more]")
        text = text[:max_chars]
    if page.cut:
        notes.append(f"[the page is larger than {max_bytes:,} bytes; only its beginning was read]")
    content = "\n".join(header) + "\n\n" + text + ("\n\n" + "\n".join(notes) if notes else "")
    return ToolResult(
        content=content,
        meta={"url": str(page.url), "status": page.status, "content_type": page.content_type, "bytes": len(page.body)},
    )
