"""The request sent last, kept per session for `/context` and `cairn context` (the `sent_requests` table).

Compressed off the event loop; a damaged record reads as none, since it is only a display aid.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from typing import Any

from agent.session.store.connection import StoreConnection


class SentRequestsTable(StoreConnection):
    async def save_request(self, session_id: str, *, sent_at: int, model: str, request_json: str) -> None:
        """Keep `request_json` (a JSON object: messages, tools, parameters) as the session's last request."""
        body = await asyncio.to_thread(zlib.compress, request_json.encode("utf-8"), 1)
        async with self._transaction():
            await self.conn.execute(
                "INSERT OR REPLACE INTO sent_requests (session_id, sent_at, model, body) VALUES (?, ?, ?, ?)",
                (session_id, sent_at, model, body),
            )

    async def last_request(self, session_id: str) -> dict[str, Any] | None:
        """`{"sent_at", "model", **request}` of the session's last request, or None."""
        async with self.conn.execute(
            "SELECT sent_at, model, body FROM sent_requests WHERE session_id = ?", (session_id,)
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        try:
            request = json.loads(zlib.decompress(row[2]))
        except (zlib.error, ValueError):
            return None  # a damaged record is only a display aid: the history is intact
        return {"sent_at": row[0], "model": row[1], **request}
