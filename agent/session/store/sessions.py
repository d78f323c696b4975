"""Sessions: creating, finding, listing, renaming and deleting them (the `sessions` table).

A session's delete is the only place history is removed; it takes the session's rows out of
every table in one transaction and collects the blobs nothing names any more.
"""

from __future__ import annotations

from typing import Any

from agent.session.errors import StoreError
from agent.session.models import Session, SessionSummary, now_ms
from agent.session.rows import row_to_session
from agent.session.schema import LATEST_FIRST, NEXT_TOUCHED_SQL
from agent.session.store.connection import StoreConnection

# The picker shows a one-line preview; never read a whole pasted file for it.
FIRST_PROMPT_PREVIEW_CHARS = 300
# Blobs a message's meta names (attached images, agent/images.py): kept while any message names them.
_IMAGE_HASHES = (
    "SELECT hash FROM (SELECT json_extract(image.value, '$.hash') AS hash FROM messages,"
    " json_each(messages.meta, '$.images') AS image WHERE messages.meta LIKE '%\"images\"%'"
    " AND json_valid(messages.meta) AND json_type(messages.meta, '$.images') = 'array'"
    " AND image.type = 'object') WHERE hash IS NOT NULL"
)
# A session holding at least one message (`s` is the sessions row).
_HAS_MESSAGES = "EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"
# A user's own session, not a subagent's (those are reached through their parent).
_TOP_LEVEL = "s.agent IS NULL"


class SessionsTable(StoreConnection):
    async def create_session(
        self,
        *,
        cwd: str,
        model: str = "",
        title: str = "",
        parent_session_id: str | None = None,
        agent: str | None = None,
        parent_call_id: str | None = None,
    ) -> Session:
        session = Session(
            cwd=cwd,
            model=model,
            title=title,
            parent_session_id=parent_session_id,
            agent=agent,
            parent_call_id=parent_call_id,
        )
        async with self._transaction():
            await self._insert_session_row(session)
        return session

    async def _insert_session_row(self, session: Session) -> None:
        await self.conn.execute(
            "INSERT INTO sessions (id, title, cwd, created_at, updated_at, head_id, model, parent_session_id,"
            f" agent, parent_call_id, touched) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {NEXT_TOUCHED_SQL})",
            (
                session.id,
                session.title,
                session.cwd,
                session.created_at,
                session.updated_at,
                session.head_id,
                session.model,
                session.parent_session_id,
                session.agent,
                session.parent_call_id,
            ),
        )

    async def get_session(self, session_id: str) -> Session | None:
        async with self.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)) as cur:
            row = await cur.fetchone()
        return row_to_session(row) if row else None

    async def find_session(self, id_or_prefix: str) -> Session | None:
        """Exact id, or a unique prefix of one."""
        exact = await self.get_session(id_or_prefix)
        if exact:
            return exact
        async with self.conn.execute(
            "SELECT * FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
            (id_or_prefix.replace("%", "\\%").replace("_", "\\_") + "%",),
        ) as cur:
            rows = list(await cur.fetchall())
        return row_to_session(rows[0]) if len(rows) == 1 else None

    async def latest_session(self, cwd: str, *, with_messages: bool = False) -> Session | None:
        """The folder's session written last (`--continue`); a same-millisecond tie goes to
        the later write (`touched`), not to the session created later. `with_messages`: only
        a session holding a message (`--continue` skips a launch that asked nothing)."""
        sql = f"SELECT * FROM sessions s WHERE s.cwd = ? AND {_TOP_LEVEL}" + (
            f" AND {_HAS_MESSAGES}" if with_messages else ""
        )
        async with self.conn.execute(f"{sql} ORDER BY {LATEST_FIRST} LIMIT 1", (cwd,)) as cur:
            row = await cur.fetchone()
        return row_to_session(row) if row else None

    async def list_summaries(
        self, cwd: str | None = None, limit: int = 1000, *, with_messages: bool = False, subagents: bool = False
    ) -> list[SessionSummary]:
        """Newest first, with the first prompt's preview and the message count (one query).
        `with_messages`: leave out sessions without a message (`cairn session list`);
        `subagents`: subagents' sessions too (else only the user's own)."""
        sql = (
            "SELECT s.*,"
            " (SELECT substr(content, 1, ?) FROM messages m WHERE m.session_id = s.id AND m.role = 'user'"
            "  ORDER BY m.seq LIMIT 1) AS first_prompt,"
            " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS message_count"
            " FROM sessions s"
        )
        params: list[Any] = [FIRST_PROMPT_PREVIEW_CHARS]
        where = [] if subagents else [_TOP_LEVEL]
        if cwd is not None:
            where.append("s.cwd = ?")
            params.append(cwd)
        if with_messages:
            where.append(_HAS_MESSAGES)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {LATEST_FIRST} LIMIT ?"
        params.append(limit)
        async with self.conn.execute(sql, params) as cur:
            rows = await cur.fetchall()
        return [
            SessionSummary(
                session=row_to_session(r), first_prompt=r["first_prompt"] or "", message_count=r["message_count"]
            )
            for r in rows
        ]

    async def subagent_sessions(self, parent_session_id: str) -> list[Session]:
        """The sessions subagents ran for `parent_session_id`, oldest first."""
        async with self.conn.execute(
            "SELECT * FROM sessions WHERE parent_session_id = ? AND agent IS NOT NULL ORDER BY created_at, rowid",
            (parent_session_id,),
        ) as cur:
            rows = await cur.fetchall()
        return [row_to_session(r) for r in rows]

    async def delete_session(self, session_id: str) -> None:
        """The only way history is removed: the session, its messages, its checkpoints (and
        its subagents' sessions, which only it reaches)."""
        for child in await self.subagent_sessions(session_id):
            await self.delete_session(child.id)
        async with self._transaction():
            await self.conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            await self.conn.execute("DELETE FROM file_changes WHERE session_id = ?", (session_id,))
            await self.conn.execute("DELETE FROM context_events WHERE session_id = ?", (session_id,))
            await self.conn.execute("DELETE FROM sent_requests WHERE session_id = ?", (session_id,))
            await self.conn.execute("DELETE FROM notices WHERE session_id = ?", (session_id,))
            await self.conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            await self.conn.execute(
                "DELETE FROM blobs WHERE hash NOT IN (SELECT before_hash FROM file_changes"
                " WHERE before_hash IS NOT NULL UNION SELECT after_hash FROM file_changes"
                " WHERE after_hash IS NOT NULL UNION " + _IMAGE_HASHES + ")"
            )

    async def prune_if_empty(self, session_id: str) -> bool:
        """Remove the session if it holds no message (a launch quit before anything was asked,
        the session left by /new or the picker before its first prompt): it has no history to
        lose. Checked and removed in one transaction, so a message another process wrote
        first keeps it. No blob is collected: an empty session references none, and a blob
        another process just stored may not be referenced yet. True when it was removed."""
        async with self._transaction():
            async with self.conn.execute("SELECT 1 FROM messages WHERE session_id = ? LIMIT 1", (session_id,)) as cur:
                if await cur.fetchone() is not None:
                    return False
            for table in ("file_changes", "context_events", "sent_requests", "notices"):
                await self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            cur = await self.conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cur.rowcount > 0

    async def update_session(self, session: Session, **fields: Any) -> Session:
        allowed = {"title", "head_id", "model", "cwd"}
        bad = set(fields) - allowed
        if bad:
            raise StoreError(f"cannot update session fields {sorted(bad)}")
        fields["updated_at"] = now_ms()
        sets = ", ".join(f"{k} = ?" for k in fields) + f", touched = {NEXT_TOUCHED_SQL}"
        async with self._transaction():
            await self.conn.execute(f"UPDATE sessions SET {sets} WHERE id = ?", (*fields.values(), session.id))
        return session.model_copy(update=fields)
