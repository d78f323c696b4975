"""The budget's context events (seed 001: condenses, truncations, their outcome): the `context_events` table."""

from __future__ import annotations

import json

from agent.session.models import ContextEvent
from agent.session.store.connection import StoreConnection


class ContextEventsTable(StoreConnection):
    async def record_context_event(self, event: ContextEvent) -> ContextEvent:
        async with self._transaction():
            cur = await self.conn.execute(
                "INSERT INTO context_events (session_id, created_at, action, trigger, outcome, tokens_before,"
                " tokens_after, duration_ms, summary_id, error, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event.session_id,
                    event.created_at,
                    event.action,
                    event.trigger,
                    event.outcome,
                    event.tokens_before,
                    event.tokens_after,
                    event.duration_ms,
                    event.summary_id,
                    event.error,
                    json.dumps(event.detail, ensure_ascii=False, default=str),
                ),
            )
            event.id = cur.lastrowid or 0
        return event

    async def context_events(self, session_id: str, limit: int = 100) -> list[ContextEvent]:
        """The newest `limit` budget events of a session, oldest first."""
        async with self.conn.execute(
            "SELECT * FROM (SELECT * FROM context_events WHERE session_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
            (session_id, limit),
        ) as cur:
            rows = await cur.fetchall()
        return [
            # A sqlite3.Row iterates over its values: keys() names the columns.
            ContextEvent(**{k: r[k] for k in r.keys() if k != "detail"}, detail=json.loads(r["detail"] or "{}"))  # noqa: SIM118
            for r in rows
        ]
