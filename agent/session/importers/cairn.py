"""Our own JSONL export (agent/session/export.py), read back losslessly.

A header line `{"type": "session", "format": "cairn-session", "version": 1, ...}` with every
Session field, then one `{"type": "message", ...}` line per stored message (all branches).
Everything is kept as written — ids, links, seq, timestamps, meta — so that export →
import → export is byte-identical.
"""

from __future__ import annotations

from pydantic import ValidationError

from agent.session.importers import ImportedSession, ImportFormatError, json_lines, load_json
from agent.session.models import Message, Session

FORMAT = "cairn-session"
VERSION = 1


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def detect(text: str) -> bool:
    try:
        head = load_json(_first_line(text))
    except ValueError:
        return False
    return isinstance(head, dict) and head.get("format") == FORMAT


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "record"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def parse(text: str) -> ImportedSession:
    header: Session | None = None
    messages: list[Message] = []
    for number, record in json_lines(text):
        kind = record.get("type")
        try:
            if header is None:
                if kind != "session" or record.get("format") != FORMAT:
                    raise ImportFormatError(f"line {number}: not a cairn session export (no session header)")
                version = record.get("version")
                if version != VERSION:
                    raise ImportFormatError(f"line {number}: unsupported cairn export version {version!r}")
                header = Session.model_validate(record)
            elif kind == "message":
                messages.append(Message.model_validate(record))
            else:
                raise ImportFormatError(f"line {number}: unexpected record type {kind!r}")
        except ValidationError as exc:
            raise ImportFormatError(f"line {number}: {_validation_message(exc)}") from None
    if header is None:
        raise ImportFormatError("not a cairn session export (no session header)")
    return ImportedSession(
        id=header.id, title=header.title, cwd=header.cwd, model=header.model,
        created_at=header.created_at, updated_at=header.updated_at,
        parent_session_id=header.parent_session_id, head_id=header.head_id, messages=messages,
    )
