"""Messages: the tree of a session's log, its head, and the active path (the `messages` table).

Every message is written the moment it exists and becomes the session's new head; a tool
result's file checkpoints go in with it, in the same transaction (BlobsTable). Rewind only
moves the head; nothing here deletes a message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from agent.session.errors import StoreError
from agent.session.models import Message, Session, now_ms
from agent.session.rows import chunks, message_params, row_to_message
from agent.session.schema import ACTIVE_PATH_SQL, NEXT_TOUCHED_SQL
from agent.session.store.blobs import BlobsTable
from agent.session.store.connection import one_value
from agent.session.store.sessions import SessionsTable

_INSERT_MESSAGE = (
    "INSERT INTO messages (id, session_id, parent_id, seq, role, content, tool_calls,"
    " tool_call_id, tool_name, created_at, status, kind, meta)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class MessagesTable(SessionsTable, BlobsTable):
    """Messages need their session (the head moves with each) and the checkpoint rows."""

    async def _next_seq(self, session_id: str) -> int:
        async with self.conn.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
        ) as cur:
            return await one_value(cur)

    async def append(
        self, session: Session, message: Message, file_changes: Iterable[tuple[str, bytes | None, bytes | None]] = ()
    ) -> Message:
        """Write a message as the new head of the session (its parent is the old head).

        Fills `session_id`, `parent_id` and `seq` on the given object, so callers holding
        it see what was stored. `file_changes` (path, before, after) are the checkpoints of
        a tool result, written in the same transaction: a kill cannot separate them.
        """
        message.session_id = session.id
        message.parent_id = message.parent_id or session.head_id
        async with self._transaction():
            message.seq = await self._next_seq(session.id)
            await self.conn.execute(_INSERT_MESSAGE, message_params(message))
            for path, before, after in file_changes:
                await self._insert_change(session.id, message.id, path, before, after)
            ts = now_ms()
            await self.conn.execute(
                f"UPDATE sessions SET head_id = ?, updated_at = ?, touched = {NEXT_TOUCHED_SQL} WHERE id = ?",
                (message.id, ts, session.id),
            )
        session.head_id = message.id
        session.updated_at = ts
        return message

    async def update_message(self, message: Message) -> None:
        """Rewrite a message's mutable fields (streamed text, final status, tool calls, meta)."""
        async with self._transaction():
            await self.conn.execute(
                "UPDATE messages SET content = ?, tool_calls = ?, status = ?, meta = ? WHERE id = ?",
                (
                    message.content,
                    json.dumps([tc.model_dump() for tc in message.tool_calls]) if message.tool_calls else None,
                    message.status,
                    json.dumps(message.meta, ensure_ascii=False, default=str) if message.meta else None,
                    message.id,
                ),
            )

    async def mark_condensed(self, message_ids: Iterable[str], summary_id: str) -> None:
        """Seed 001 §3.4.5 step 8: the originals a summary replaced get `meta.condensed_by`
        (they stay stored and shown; only the UI dims them)."""
        async with self._transaction():
            for chunk, marks in chunks(message_ids):
                await self.conn.execute(
                    f"UPDATE messages SET meta = json_set(coalesce(meta, '{{}}'), '$.condensed_by', ?)"
                    f" WHERE id IN ({marks})",
                    [summary_id, *chunk],
                )

    async def get_message(self, message_id: str) -> Message | None:
        async with self.conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)) as cur:
            row = await cur.fetchone()
        return row_to_message(row) if row else None

    async def all_messages(self, session_id: str) -> list[Message]:
        """Every stored message of a session (all branches), in creation order."""
        async with self.conn.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)) as cur:
            return [row_to_message(r) for r in await cur.fetchall()]

    async def active_path(self, session_id: str, head_id: str | None = None, limit: int | None = None) -> list[Message]:
        """Root → head chain via parent_id (a recursive query; other branches are not read).

        With `limit`, only the newest `limit` messages of the chain are read."""
        if head_id is None:
            session = await self.get_session(session_id)
            if session is None:
                raise StoreError(f"no session {session_id}")
            head_id = session.head_id
        if head_id is None:
            return []
        async with self.conn.execute(
            ACTIVE_PATH_SQL.format(columns="messages.*"),
            (head_id, session_id, session_id, (limit if limit is not None else 10_000_000) - 1),
        ) as cur:
            return [row_to_message(r) for r in await cur.fetchall()]

    async def set_head(self, session: Session, head_id: str | None) -> Session:
        """Move the session's head (rewind, switching branch); no message is touched."""
        if head_id is not None:
            message = await self.get_message(head_id)
            if message is None or message.session_id != session.id:
                raise StoreError(f"message {head_id} is not in session {session.id}")
        return await self.update_session(session, head_id=head_id)

    async def insert_session(self, session: Session, messages: list[Message]) -> Session:
        """Write a whole session at once (import, fork), ids and links as given, in one transaction."""
        for m in messages:
            m.session_id = session.id
        async with self._transaction():
            await self._insert_session_row(session)
            await self.conn.executemany(_INSERT_MESSAGE, [message_params(m) for m in messages])
        return session

    async def existing_message_ids(self, ids: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for chunk, marks in chunks(ids):
            async with self.conn.execute(f"SELECT id FROM messages WHERE id IN ({marks})", chunk) as cur:
                found.update(r[0] for r in await cur.fetchall())
        return found

    async def branch_leaves(self, session_id: str) -> list[Message]:
        """Messages nothing continues from (ends of branches), newest first: the head is one of them."""
        async with self.conn.execute(
            "SELECT * FROM messages m WHERE m.session_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM messages c WHERE c.parent_id = m.id AND c.session_id = m.session_id)"
            " ORDER BY m.seq DESC",
            (session_id,),
        ) as cur:
            return [row_to_message(r) for r in await cur.fetchall()]
