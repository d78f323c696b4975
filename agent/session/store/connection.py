"""The store's connection: opening the database, the one writer's transaction, migrations.

Every table group of the store (agent/session/store/) is a class built on this one, so they
all share one aiosqlite connection and one write lock: a transaction that spans groups (a
tool result with its file checkpoints, a session delete) is one `_transaction` like any other.
Opening turns SQLite's and the OS's failures into one readable line (agent/session/errors.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Self

import aiosqlite

from agent.paths import db_path
from agent.session.errors import ForeignDatabase, open_error, write_error
from agent.session.schema import MIGRATIONS

BUSY_TIMEOUT_MS = 30_000


async def one_value(cur: aiosqlite.Cursor) -> Any:
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


class StoreConnection:
    """The open database the table groups share (`conn`), the file it is (`path`)."""

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
    async def open(cls, path: Path | None = None, *, read_only: bool = False) -> Self:
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
    async def _open_read_only(cls, path: Path) -> Self:
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
            current = await one_value(cur) or 0
        for version, script in enumerate(MIGRATIONS, start=1):
            if version <= current:
                continue
            # BEGIN IMMEDIATE so two processes starting at once do not both migrate.
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                async with self.conn.execute("SELECT MAX(version) FROM schema_version") as cur:
                    again = await one_value(cur) or 0
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
            return await one_value(cur) or 0
