"""A server's paged list (tools, prompts), read to a bound: a server that pages forever, or
lists thousands, costs cairn a fixed number of requests and items."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def read_pages(
    fetch: Callable[[str | None], Awaitable[Any]], items: str, *, max_pages: int, max_items: int
) -> list[Any]:
    """The `items` of each page `fetch(cursor)` returns, at most `max_pages` pages and
    `max_items` items."""
    listed: list[Any] = []
    cursor = None
    for _ in range(max_pages):
        page = await fetch(cursor)
        listed.extend(getattr(page, items))
        cursor = page.next_cursor
        if not cursor or len(listed) >= max_items:
            break
    return listed[:max_items]
