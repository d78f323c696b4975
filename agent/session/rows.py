"""How messages and sessions map to database rows and back (agent/session/store/ runs the SQL)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from agent.session.models import Message, Session, ToolCall
from agent.session.titles import readable_title


def chunks(ids: Iterable[str], size: int = 500) -> Iterator[tuple[list[str], str]]:
    """Distinct ids in batches small enough for SQLite's parameter limit, with their `?,?,…`."""
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), size):
        chunk = unique[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


def row_to_message(row: Any) -> Message:
    return Message(
        id=row["id"],
        session_id=row["session_id"],
        parent_id=row["parent_id"],
        seq=row["seq"],
        role=row["role"],
        content=row["content"],
        tool_calls=[ToolCall(**tc) for tc in json.loads(row["tool_calls"] or "[]")],
        tool_call_id=row["tool_call_id"],
        tool_name=row["tool_name"],
        created_at=row["created_at"],
        status=row["status"],
        kind=row["kind"],
        meta=json.loads(row["meta"] or "{}"),
    )


def row_to_session(row: Any) -> Session:
    # A sqlite3.Row iterates over its values: keys() names the columns.
    fields = {k: row[k] for k in row.keys() if k in Session.model_fields}  # noqa: SIM118
    if isinstance(fields.get("title"), str):
        fields["title"] = readable_title(fields["title"])  # a command's expansion, stored before: `/name`
    return Session(**fields)


def message_params(m: Message) -> tuple[Any, ...]:
    return (
        m.id,
        m.session_id,
        m.parent_id,
        m.seq,
        m.role,
        m.content,
        json.dumps([tc.model_dump() for tc in m.tool_calls]) if m.tool_calls else None,
        m.tool_call_id,
        m.tool_name,
        m.created_at,
        m.status,
        m.kind,
        json.dumps(m.meta, ensure_ascii=False, default=str) if m.meta else None,
    )
