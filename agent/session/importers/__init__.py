"""Bringing sessions recorded elsewhere (or exported by cairn) into the store.

Each format is one module with two pure functions: `detect(text) -> bool` (cheap: does this
look like my format?) and `parse(text) -> ImportedSession` (no I/O, no store). Keeping the
parsers pure means they can be tested on their own and a broken file can never leave half a
session behind; `import_session` is the one place that writes, in a single transaction.

Formats: `cairn` (our lossless JSONL export), `claude-code` (Claude Code's session JSONL)
and `openai` (a chat-completions message list). `parse_any` tries them in that order.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from pydantic import BaseModel, Field

from agent.session.models import Message, Session, new_id, now_ms

FORMATS = ("cairn", "claude-code", "openai")
_MODULES = {"cairn": "cairn", "claude-code": "claude_code", "openai": "openai"}


class ImportFormatError(ValueError):
    """The input is not in the requested format, or one of its lines/records is broken.

    The message is meant for the user as is (e.g. "line 7: not valid JSON (...)").
    """


class ImportedSession(BaseModel):
    """What a parser produces: a whole session, not yet stored.

    `messages` carry their own ids, parent links and seq; `head_id` names one of them.
    `id`, `updated_at` and `parent_session_id` are only known for our own format, which
    keeps them so that an export → import → export round trip is exact.
    """

    source: str = ""
    id: str | None = None
    title: str = ""
    cwd: str = ""
    model: str = ""
    created_at: int | None = None
    updated_at: int | None = None
    parent_session_id: str | None = None
    head_id: str | None = None
    messages: list[Message] = Field(default_factory=list)


def json_lines(text: str) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file; a broken line is named."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ImportFormatError(f"line {number}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise ImportFormatError(f"line {number}: expected a JSON object")
        out.append((number, record))
    return out


def _module(fmt: str) -> Any:
    return importlib.import_module(f"agent.session.importers.{_MODULES[fmt]}")


def detect_format(text: str) -> str | None:
    for fmt in FORMATS:
        if _module(fmt).detect(text):
            return fmt
    return None


def parse_any(text: str, fmt: str = "auto") -> ImportedSession:
    """Parse `text` in `fmt`, or in the first format that recognises it ("auto")."""
    if fmt != "auto" and fmt not in _MODULES:
        raise ImportFormatError(f"unknown format '{fmt}' (choose auto, {', '.join(FORMATS)})")
    if not text.strip():
        raise ImportFormatError("the file is empty")
    if fmt == "auto":
        found = detect_format(text)
        if found is None:
            raise ImportFormatError(
                "not a recognised session format (expected a cairn JSONL export, a Claude Code "
                "session JSONL or an OpenAI chat message list in JSON)"
            )
        fmt = found
    imported = _module(fmt).parse(text)
    imported.source = fmt
    return imported


def _check_ids(messages: list[Message]) -> None:
    seen: set[str] = set()
    for m in messages:
        if m.id in seen:
            raise ImportFormatError(f"message id {m.id} occurs twice")
        seen.add(m.id)


async def import_session(store: Any, imported: ImportedSession, *, cwd_default: str) -> Session:
    """Write `imported` as a new session and return it.

    Ids are kept when they are free, so that a session moved between machines keeps its
    identity (and a round trip through a fresh database is exact). If any message id is
    already stored, ALL message ids are replaced consistently (parents and head follow);
    tool call ids stay, they only have to be unique within the session. A taken session id
    is replaced by a new one.
    """
    messages = [m.model_copy(deep=True) for m in imported.messages]
    _check_ids(messages)
    head_id = imported.head_id
    if messages and await store.existing_message_ids([m.id for m in messages]):
        mapping = {m.id: new_id() for m in messages}
        for m in messages:
            m.id = mapping[m.id]
            if m.parent_id is not None:
                m.parent_id = mapping.get(m.parent_id, m.parent_id)
        if head_id is not None:
            head_id = mapping.get(head_id, head_id)
    session_id = imported.id
    if not session_id or await store.get_session(session_id) is not None:
        session_id = new_id()
    times = [m.created_at for m in messages if m.created_at > 0]
    created_at = imported.created_at or (min(times) if times else now_ms())
    updated_at = imported.updated_at or (max(times) if times else created_at)
    session = Session(
        id=session_id, title=imported.title, cwd=imported.cwd or cwd_default, created_at=created_at,
        updated_at=updated_at, head_id=head_id, model=imported.model,
        parent_session_id=imported.parent_session_id,
    )
    return await store.insert_session(session, messages)
