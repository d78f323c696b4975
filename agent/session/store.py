"""The session log: the only module with SQL.

SQLite in WAL mode through aiosqlite. Messages form a tree (`parent_id`); each session
has a `head_id`, and the active path is the chain from the head back to the root.
Every message is written the moment it exists; nothing here deletes history except an
explicit session delete.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sqlite3
import zlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import aiosqlite

from agent.session.errors import (  # noqa: F401 - re-exported
    ForeignDatabase,
    StoreError,
    StoreOpenError,
    StoreWriteError,
    open_error,
    write_error,
)
from agent.session.models import ContextEvent, FileChange, Message, Session, SessionSummary, ToolCall, now_ms
from agent.session.rows import chunks, message_params, row_to_message, row_to_session
from agent.session.schema import ACTIVE_PATH_SQL, LATEST_FIRST, MIGRATIONS, NEXT_TOUCHED_SQL
from agent.settings.config import db_path

BUSY_TIMEOUT_MS = 30_000
# The picker shows a one-line preview; never read a whole pasted file for it.
FIRST_PROMPT_PREVIEW_CHARS = 300
# Blobs a message's meta names (attached images, agent/images.py): kept while any message names them.
_IMAGE_HASHES = (
    "SELECT hash FROM (SELECT json_extract(image.value, '$.hash') AS hash FROM messages,"
    " json_each(messages.meta, '$.images') AS image WHERE messages.meta LIKE '%\"images\"%'"
    " AND json_valid(messages.meta) AND json_type(messages.meta, '$.images') = 'array'"
    " AND image.type = 'object') WHERE hash IS NOT NULL"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (id, session_id, parent_id, seq, role, content, tool_calls,"
    " tool_call_id, tool_name, created_at, status, kind, meta)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


async def _aggregate(cur: aiosqlite.Cursor) -> Any:
    """The value an aggregate SELECT (MAX, COALESCE(MAX…)) returns: always exactly one row."""
    row = await cur.fetchone()
    assert row is not None
    return row[0]


async def _refuse_foreign(conn: aiosqlite.Connection) -> None:
    """Before anything is written (even WAL mode changes the file's header): a database with
    tables but without cairn's `schema_version` belongs to something else."""
    async with conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'") as cur:
        tables = sorted(row[0] for row in await cur.fetchall() if not row[0].startswith("sqlite_"))
    if tables and "schema_version" not in tables:
        shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
        raise ForeignDatabase(shown)


async def _enable_wal(conn: aiosqlite.Connection) -> None:
    """Switch to WAL, waiting for other processes doing the same.

    Two processes opening a new database at once both ask for WAL; SQLite answers one of
    them "database is locked" at once, without its busy handler, so wait and ask again (the
    mode is stored in the file: once set, asking again is a no-op)."""
    deadline = asyncio.get_running_loop().time() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or asyncio.get_running_loop().time() > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)


# Store.large_tool_results: tool results over a number of characters, counted as Python's
# len() counts them (code points). A UTF-8 text has as many characters as bytes that are not
# continuation bytes (0x80-0xBF). `length(content)` is exact unless the text holds a NUL
# (SQLite stops there), and bytes bound characters from above, so only a text with a NUL and
# enough bytes is counted byte by byte: over its first 4 × (limit + 1) bytes (a character
# has at most 4), the characters beginning there = Σ over the 64 continuation byte values b
# of len(prefix without b) − 63 × len(prefix). More than `limit` of them ⇔ more than
# `limit` characters in all (if not, the whole text fits in the prefix). `replace()` works on
# all bytes of a value; only its pattern must not start with NUL.
_LARGE_PREFIX = "substr(CAST(content AS BLOB), 1, ?)"
_LARGE_PREFIX_USES = 65
_LARGE_CHARS = (
    " + ".join(f"length(CAST(replace({_LARGE_PREFIX}, x'{b:02X}', '') AS BLOB))" for b in range(0x80, 0xC0))
    + f" - 63 * length({_LARGE_PREFIX})"
)
_LARGE_TOOL_RESULT = (
    "SELECT id, seq, tool_call_id, tool_name, created_at, status FROM messages"
    " WHERE session_id = ? AND seq > ? AND role = 'tool' AND length(CAST(content AS BLOB)) > ?"
    f" AND (length(content) > ? OR (instr(CAST(content AS BLOB), x'00') > 0 AND ({_LARGE_CHARS}) > ?))"
    " ORDER BY seq"
)


# A session holding at least one message (`s` is the sessions row).
_HAS_MESSAGES = "EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"
# A user's own session, not a subagent's (those are reached through their parent).
_TOP_LEVEL = "s.agent IS NULL"


class Store:
    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        # One writer per connection: a turn streaming, a tool result and a /rename from the
        # UI must not open transactions inside each other. Other processes wait on SQLite's
        # own lock (busy_timeout).
        self._write_lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        async with self._write_lock:
            try:
                await self.conn.execute("BEGIN IMMEDIATE")
                yield
                await self.conn.commit()
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    await self.conn.rollback()
                raise write_error(exc, self.path) from exc
            except BaseException:
                await self.conn.rollback()
                raise

    @classmethod
    async def open(cls, path: Path | None = None, *, read_only: bool = False) -> Store:
        """Open (creating or migrating) the database. A file that cannot be used — damaged,
        another program's, read-only, on a full disk — raises StoreOpenError, a readable line;
        a damaged or foreign file is left exactly as it was.

        `read_only`: for commands that only read (`cairn session list`, `export`), which
        must work on a data folder cairn may not write: nothing is created, migrated or
        switched to WAL. A database not there yet is opened as usual (created, or the
        read-only folder named)."""
        path = path or db_path()
        if read_only and path.is_file():
            return await cls._open_read_only(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise open_error(exc, path) from exc
        conn = aiosqlite.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            await conn
        except sqlite3.Error as exc:
            # aiosqlite stops its worker thread without waiting for it; left running, it
            # reports to an event loop that is gone by then (a traceback after our message).
            worker = getattr(conn, "_thread", None)
            for _ in range(500):
                if worker is None or not worker.is_alive():
                    break
                await asyncio.sleep(0.01)
            raise open_error(exc, path) from exc
        conn.row_factory = aiosqlite.Row
        store = cls(conn, path)
        try:
            await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await _refuse_foreign(conn)
            await _enable_wal(conn)
            await conn.execute("PRAGMA synchronous = NORMAL")
            await conn.execute("PRAGMA foreign_keys = ON")
            await store._migrate()
        except BaseException as exc:
            # aiosqlite's worker thread is not a daemon: left open, it keeps the process alive.
            await conn.close()
            if isinstance(exc, (sqlite3.Error, OSError, ForeignDatabase)):
                raise open_error(exc, path) from exc
            raise
        return store

    @classmethod
    async def _open_read_only(cls, path: Path) -> Store:
        """`mode=ro`; where SQLite cannot make the WAL's shared-memory file beside it (the
        folder is read-only), `immutable=1` too: nothing can write there either."""
        from urllib.parse import quote

        last: BaseException | None = None
        for options in ("mode=ro", "mode=ro&immutable=1"):
            conn = aiosqlite.connect(f"file:{quote(str(path))}?{options}", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
            try:
                await conn
            except sqlite3.Error as exc:
                raise open_error(exc, path) from exc
            conn.row_factory = aiosqlite.Row
            store = cls(conn, path)
            try:
                await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                await _refuse_foreign(conn)
                if await store.schema_version() < len(MIGRATIONS):
                    raise sqlite3.OperationalError("attempt to write a readonly database (it needs an update)")
                return store
            except sqlite3.OperationalError as exc:
                await conn.close()
                last = exc  # e.g. "attempt to write a readonly database": the WAL's -shm file
            except BaseException as exc:
                await conn.close()
                if isinstance(exc, (sqlite3.Error, OSError, ForeignDatabase)):
                    raise open_error(exc, path) from exc
                raise
        assert last is not None  # the loop ends only on an error
        raise open_error(last, path) from last

    async def close(self) -> None:
        await self.conn.close()

    # -- schema ---------------------------------------------------------------------
    async def _migrate(self) -> None:
        await self.conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        async with self.conn.execute("SELECT MAX(version) FROM schema_version") as cur:
            current = await _aggregate(cur) or 0
        for version, script in enumerate(MIGRATIONS, start=1):
            if version <= current:
                continue
            # BEGIN IMMEDIATE so two processes starting at once do not both migrate.
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                async with self.conn.execute("SELECT MAX(version) FROM schema_version") as cur:
                    again = await _aggregate(cur) or 0
                if again < version:
                    for statement in script.split(";"):
                        if statement.strip():
                            await self.conn.execute(statement)
                    await self.conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                await self.conn.commit()
            except BaseException:
                await self.conn.rollback()
                raise

    async def schema_version(self) -> int:
        async with self.conn.execute("SELECT MAX(version) FROM schema_version") as cur:
            return await _aggregate(cur) or 0

    # -- sessions -------------------------------------------------------------------
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
            for table in ("file_changes", "context_events", "sent_requests"):
                await self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            cur = await self.conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cur.rowcount > 0

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

    # -- messages -------------------------------------------------------------------
    async def _next_seq(self, session_id: str) -> int:
        async with self.conn.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
        ) as cur:
            return await _aggregate(cur)

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

    # -- the request sent last (`/context`, `cairn context`) -------------------------------
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

    # -- context files (seed 004): facts about large tool results, never their text --------
    async def large_tool_results(self, session_id: str, min_chars: int, after_seq: int = 0) -> list[dict[str, Any]]:
        """Tool results of a session (all branches) longer than `min_chars` characters and
        written after `after_seq`, oldest first, without their content (a tool result is
        written once, so callers can scan incrementally).

        Characters as Python's `len()` counts them — the request side's measure (the
        externalize pass), so every output sent as a ref has a context file. SQLite's
        `length()` stops at the first NUL of a TEXT, so a text with a NUL is counted on its
        UTF-8 bytes instead (`_LARGE_TOOL_RESULT`)."""
        prefix = 4 * (max(min_chars, 0) + 1)
        async with self.conn.execute(
            _LARGE_TOOL_RESULT,
            (session_id, after_seq, min_chars, min_chars, *([prefix] * _LARGE_PREFIX_USES), min_chars),
        ) as cur:
            return [dict(row) for row in await cur.fetchall()]

    async def tool_result_shapes(self, message_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """For each tool result: its UTF-8 size; `json_kind` 'object'/'array' when it is JSON;
        and when it is `{"stdout": …, "stderr": …}` the UTF-8 sizes of both and whether stdout
        ends with a newline (a terminal result's context file is a log of the two). Parses the
        JSON in SQLite (three passes) so the text never reaches Python."""
        out: dict[str, dict[str, Any]] = {}
        for chunk, marks in chunks(message_ids, 200):
            async with self.conn.execute(
                f"""
                WITH shaped AS MATERIALIZED (
                    SELECT id, length(CAST(content AS BLOB)) AS bytes,
                           CASE WHEN substr(content, 1, 1) IN ('{{', '[') AND json_valid(content)
                                THEN CASE substr(content, 1, 1) WHEN '{{' THEN 'object' ELSE 'array' END
                           END AS json_kind,
                           content
                    FROM messages WHERE id IN ({marks}) AND role = 'tool'
                ), parts AS MATERIALIZED (
                    SELECT id, bytes, json_kind,
                           CASE WHEN json_kind = 'object' THEN json_extract(content, '$.stdout') END AS stdout,
                           CASE WHEN json_kind = 'object' THEN json_extract(content, '$.stderr') END AS stderr
                    FROM shaped
                )
                SELECT id, bytes, json_kind,
                       CASE WHEN typeof(stdout) = 'text' AND typeof(stderr) = 'text' THEN 1 ELSE 0 END AS split,
                       length(CAST(stdout AS BLOB)) AS stdout_bytes, substr(stdout, -1) = char(10) AS stdout_nl,
                       length(CAST(stderr AS BLOB)) AS stderr_bytes
                FROM parts
                """,
                chunk,
            ) as cur:
                for row in await cur.fetchall():
                    out[row["id"]] = dict(row)
        return out

    async def tool_calls_by_id(self, session_id: str, call_ids: Iterable[str]) -> list[tuple[int, ToolCall]]:
        """The calls with these ids in the session's assistant messages, with the calling
        message's seq (providers may reuse ids across turns: the caller picks the nearest)."""
        found: list[tuple[int, ToolCall]] = []
        for chunk, marks in chunks(call_ids):
            async with self.conn.execute(
                "SELECT m.seq, json_extract(j.value, '$.id') AS id, json_extract(j.value, '$.name') AS name,"
                " json_extract(j.value, '$.arguments') AS arguments"
                " FROM messages m, json_each(m.tool_calls) j"
                " WHERE m.session_id = ? AND m.role = 'assistant' AND m.tool_calls IS NOT NULL"
                f" AND json_extract(j.value, '$.id') IN ({marks})",
                (session_id, *chunk),
            ) as cur:
                for row in await cur.fetchall():
                    found.append(
                        (row["seq"], ToolCall(id=row["id"], name=row["name"] or "", arguments=row["arguments"] or ""))
                    )
        return found

    # -- file checkpoints -------------------------------------------------------------
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
