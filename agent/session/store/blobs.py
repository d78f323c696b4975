"""File checkpoints and the bytes they name: the `blobs` and `file_changes` tables.

Blobs are content-addressed (sha256), so a file's bytes are stored once however many changes
or messages name them. `_insert_change` runs inside the caller's transaction: a tool result
and its checkpoints are written together or not at all (MessagesTable.append).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from agent.session.models import FileChange
from agent.session.store.connection import StoreConnection


class BlobsTable(StoreConnection):
    async def _put_blob(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        await self.conn.execute(
            "INSERT OR IGNORE INTO blobs (hash, size, data) VALUES (?, ?, ?)", (digest, len(data), data)
        )
        return digest

    async def _insert_change(
        self, session_id: str, message_id: str, path: str, before: bytes | None, after: bytes | None
    ) -> FileChange:
        """Keep a file's bytes before and after a tool changed it (content-addressed); the
        caller holds the transaction (see `append`)."""
        change = FileChange(
            session_id=session_id,
            message_id=message_id,
            path=path,
            before_hash=await self._put_blob(before) if before is not None else None,
            after_hash=await self._put_blob(after) if after is not None else None,
        )
        cur = await self.conn.execute(
            "INSERT INTO file_changes (session_id, message_id, path, before_hash, after_hash, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                change.session_id,
                change.message_id,
                change.path,
                change.before_hash,
                change.after_hash,
                change.created_at,
            ),
        )
        change.id = cur.lastrowid or 0
        return change

    async def copy_file_changes(self, changes: list[FileChange]) -> None:
        """Rows for changes whose blobs already exist (a fork carries its checkpoints along)."""
        async with self._transaction():
            await self.conn.executemany(
                "INSERT INTO file_changes (session_id, message_id, path, before_hash, after_hash, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(c.session_id, c.message_id, c.path, c.before_hash, c.after_hash, c.created_at) for c in changes],
            )

    async def file_changes(self, session_id: str) -> list[FileChange]:
        """Every recorded change of a session, oldest first (all branches)."""
        async with self.conn.execute(
            "SELECT * FROM file_changes WHERE session_id = ? ORDER BY id", (session_id,)
        ) as cur:
            return [FileChange(**{k: r[k] for k in r.keys()}) for r in await cur.fetchall()]  # noqa: SIM118 - a Row iterates over values

    async def put_blobs(self, blobs: Iterable[bytes]) -> list[str]:
        """Keep bytes a message will name by hash (a prompt's images: agent/images.py), written
        before the message so that a stored message never names a missing blob."""
        async with self._transaction():
            return [await self._put_blob(data) for data in blobs]

    async def get_blob(self, digest: str) -> bytes | None:
        async with self.conn.execute("SELECT data FROM blobs WHERE hash = ?", (digest,)) as cur:
            row = await cur.fetchone()
        return bytes(row[0]) if row else None
