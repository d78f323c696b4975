"""Two writers on one database (two cairn processes): nothing is lost or corrupted."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys

from agent.session.models import Message
from agent.session.store import Store

WRITER = """
import asyncio, sys
from pathlib import Path
from agent.session.models import Message
from agent.session.store import Store

async def main(path, n):
    store = await Store.open(Path(path))
    session = await store.create_session(cwd="/proc")
    for i in range(n):
        await store.append(session, Message(role="user", content=f"p{i}"))
    print(session.id)
    await store.close()

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


async def test_two_connections_interleave_appends(tmp_path):
    path = tmp_path / "shared.db"
    a, b = await Store.open(path), await Store.open(path)
    try:
        shared = await a.create_session(cwd="/w")
        other = await b.get_session(shared.id)
        own = await b.create_session(cwd="/w")

        async def write(store, session, tag, n=150):
            for i in range(n):
                await store.append(session, Message(role="user", content=f"{tag}{i}"))

        await asyncio.gather(write(a, shared, "a"), write(b, own, "b"), write(b, other, "c", 50))
        counts = {s.session.id: s.message_count for s in await a.list_summaries()}
        assert counts == {shared.id: 200, own.id: 150}
        seqs = [m.seq for m in await a.all_messages(shared.id)]
        assert sorted(seqs) == list(range(1, 201))  # no seq handed out twice
    finally:
        await a.close()
        await b.close()
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_write_at_once(tmp_path):
    path = tmp_path / "procs.db"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), "300"], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    ids = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        ids.append(out.strip())
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for session_id in ids:
        rows = conn.execute("SELECT content FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        assert [r[0] for r in rows] == [f"p{i}" for i in range(300)]
