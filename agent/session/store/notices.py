"""What the user was told during a turn (the `notices` table): errors, notices, hooks' actions.

A resumed session shows them again where they were said; they are never messages, so no
request, condense or transcript reads them.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.session.models import SessionNotice
from agent.session.rows import chunks
from agent.session.store.connection import StoreConnection


class NoticesTable(StoreConnection):
    async def add_notice(self, notice: SessionNotice) -> SessionNotice:
        async with self._transaction():
            cur = await self.conn.execute(
                "INSERT INTO notices (session_id, after_id, created_at, kind, source, text) VALUES (?, ?, ?, ?, ?, ?)",
                (notice.session_id, notice.after_id, notice.created_at, notice.kind, notice.source, notice.text),
            )
            notice.id = cur.lastrowid or 0
        return notice

    async def notices(self, session_id: str, after_ids: Iterable[str | None]) -> list[SessionNotice]:
        """The session's notices said after one of `after_ids` (None: before any message), in
        the order they were said."""
        wanted = list(dict.fromkeys(after_ids))
        found: list[SessionNotice] = []
        if None in wanted:
            found += await self._select(session_id, "after_id IS NULL", ())
        ids = [i for i in wanted if i is not None]
        for part, marks in chunks(ids):
            found += await self._select(session_id, f"after_id IN ({marks})", tuple(part))
        return sorted(found, key=lambda n: n.id)

    async def _select(self, session_id: str, where: str, params: tuple[str, ...]) -> list[SessionNotice]:
        async with self.conn.execute(
            f"SELECT id, session_id, after_id, created_at, kind, source, text FROM notices"
            f" WHERE session_id = ? AND {where} ORDER BY id",
            (session_id, *params),
        ) as cur:
            rows = await cur.fetchall()
        return [SessionNotice(**{k: r[k] for k in r.keys()}) for r in rows]  # noqa: SIM118
