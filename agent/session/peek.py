"""A read-only look at a session's newest messages, for the first screen of `--resume`/`--continue`.

The one place besides agent/session/store/ that runs SQL, and only SELECTs: it must stay
standard-library only (sqlite3, json), because it runs before Textual, pydantic or the store
are imported, so a resumed conversation is on screen at once. The app then reads the
session through the store as usual. Any problem (no database yet, an unknown id, a
database being migrated) gives None: the first screen simply shows no history.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from agent.session.schema import ACTIVE_PATH_SQL, LATEST_FIRST

PEEK_MESSAGES = 30  # more than a screen holds: tool results fold into their call's lines
_COLUMNS = "messages.id, role, content, tool_calls, tool_call_id, tool_name, status, kind, meta"


def _session_head(conn: sqlite3.Connection, resume_id: str | None, cwd: str | None) -> tuple[str, str] | None:
    """(session id, head id) as the store resolves them: an exact id or a unique prefix, or
    with `cwd` the folder's latest session that has a message (`--continue` skips empty ones)."""
    if resume_id:
        rows = conn.execute("SELECT id, head_id FROM sessions WHERE id = ?", (resume_id,)).fetchall()
        if not rows:
            escaped = resume_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = conn.execute(
                "SELECT id, head_id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",)
            ).fetchall()
    elif cwd is not None:
        try:
            rows = conn.execute(
                "SELECT id, head_id FROM sessions WHERE cwd = ? AND head_id IS NOT NULL AND agent IS NULL"
                f" ORDER BY {LATEST_FIRST} LIMIT 1",
                (cwd,),
            ).fetchall()
        except sqlite3.OperationalError:
            # A database from before `touched` and `agent` (the store adds them when it opens):
            # its migration gives every row its rowid, so this is the order the store will see,
            # and it holds no subagent's session yet.
            rows = conn.execute(
                "SELECT id, head_id FROM sessions WHERE cwd = ? AND head_id IS NOT NULL"
                " ORDER BY updated_at DESC, rowid DESC LIMIT 1",
                (cwd,),
            ).fetchall()
    else:
        return None
    return (rows[0][0], rows[0][1]) if len(rows) == 1 and rows[0][1] else None


def peek_tail(
    db: Path, *, resume_id: str | None = None, cwd: str | None = None, limit: int = PEEK_MESSAGES
) -> list[dict[str, Any]] | None:
    """The newest `limit` messages on the session's active path, oldest first, as plain dicts
    (`tool_calls` and `meta` decoded); None when there is nothing to show."""
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=0.2)
    except sqlite3.Error:
        return None
    try:
        found = _session_head(conn, resume_id, cwd)
        if found is None:
            return None
        session_id, head_id = found
        rows = conn.execute(
            ACTIVE_PATH_SQL.format(columns=_COLUMNS),
            (head_id, session_id, session_id, limit - 1),
        ).fetchall()
        said = _notices(conn, session_id, [row[0] for row in rows])
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    names = [c.strip().removeprefix("messages.") for c in _COLUMNS.split(",")]
    out: list[dict[str, Any]] = []
    for row in rows:
        message = dict(zip(names, row, strict=False))
        try:
            message["tool_calls"] = json.loads(message["tool_calls"] or "[]")
            message["meta"] = json.loads(message["meta"] or "{}")
        except ValueError:
            return None
        out += [message, *said.get(message["id"], [])]
    return out


def _notices(conn: sqlite3.Connection, session_id: str, ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """What the turns told the user after each of `ids` (agent/session/store/notices.py), as
    `{"role": "notice", "kind": …, "content": …}` dicts; none in a database from before them."""
    if not ids:
        return {}
    try:
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT after_id, kind, text FROM notices WHERE session_id = ? AND after_id IN ({marks}) ORDER BY id",
            (session_id, *ids),
        ).fetchall()
    except sqlite3.OperationalError:  # no such table yet: the store adds it when it opens
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for after_id, kind, text in rows:
        out.setdefault(after_id, []).append({"role": "notice", "kind": kind, "content": text, "meta": {}})
    return out
