"""Bringing sessions recorded elsewhere (or exported by cairn) into the store.

Each format is one module with two pure functions: `detect(text) -> bool` (cheap: does this
look like my format?) and `parse(text) -> ImportedSession` (no I/O, no store). Keeping the
parsers pure means they can be tested on their own and a broken file can never leave half a
session behind; `import_session` is the one place that writes, in a single transaction.

Formats: `cairn` (our lossless JSONL export), `claude-code` (Claude Code's session JSONL),
`codex` (Codex CLI rollouts), `gemini-cli` (Gemini CLI chats), `mistral-vibe` (Mistral Vibe
`messages.jsonl`), `swe-agent` (`.traj`), `mini-swe-agent` (`.traj.json`) and
`openai` (a chat message list, OpenAI or Anthropic content blocks, e.g. Cline's
`session.messages.json`). `parse_any` tries them in that order. What a parser does not
import is listed in `ImportedSession.skipped` (see report.py).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

from pydantic import BaseModel, Field

from agent.session.models import Message, Session, new_id, now_ms

# Detection order: `openai` (any JSON chat message list) comes last, as the most general.
_MODULES = {
    "cairn": "cairn",
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini-cli": "gemini_cli",
    "mistral-vibe": "mistral_vibe",
    "swe-agent": "swe_agent",
    "mini-swe-agent": "mini_swe_agent",
    "openai": "openai",
}
FORMATS = tuple(_MODULES)


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
    agent: str | None = None  # a subagent's session (our own format: `subagent` records)
    parent_call_id: str | None = None
    head_id: str | None = None
    messages: list[Message] = Field(default_factory=list)
    # Our own format only: the sessions of the subagents this session ran, stored under it.
    subagents: list[ImportedSession] = Field(default_factory=list)
    # What the parser did not import as it stands, each {"where", "what", "reason"}: never silent.
    skipped: list[dict[str, str]] = Field(default_factory=list)
    # Our own format only: the `context-file` records (agent/session/export.py), restored
    # by `importers.cairn.restore_context_files` once the session is stored.
    context_files: list[dict] = Field(default_factory=list)


def load_json(text: str) -> Any:
    """json.loads, with nesting too deep for the parser reported as the ValueError it is."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def json_object(text: str) -> dict | None:
    """`text` as one JSON object, or None (format detection: a file that is not one is not ours)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = load_json(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def parsed_lines(text: str) -> Iterator[tuple[int, Any, ValueError | None]]:
    """(line number, parsed value, the parse error or None) for each non-blank line of a JSONL
    file: one reading of the lines, each format deciding what a broken line means to it."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, load_json(line), None
        except ValueError as exc:
            yield number, None, exc


def leading_records(text: str, limit: int) -> Iterator[dict | None]:
    """The first `limit` non-blank lines of a JSONL file as objects, for format detection;
    None for a line that is not a JSON object (the file is then not that format)."""
    for _, record, _ in islice(parsed_lines(text), limit):
        yield record if isinstance(record, dict) else None


def json_lines(text: str) -> list[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file; a broken line is named."""
    out = []
    for number, record, error in parsed_lines(text):
        if error is not None:
            raise ImportFormatError(f"line {number}: not valid JSON ({_short(str(error))})") from None
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
                "not a recognised session format (expected a cairn JSONL export, a Claude Code, "
                "Codex CLI or Gemini CLI session, a Mistral Vibe messages.jsonl, a SWE-agent or "
                "mini-swe-agent trajectory, or a chat message list in JSON: OpenAI messages or "
                "Anthropic content blocks)"
            )
        fmt = found
    imported = _module(fmt).parse(text)
    imported.source = fmt
    return imported


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _check_ids(messages: list[Message]) -> None:
    seen: set[str] = set()
    for m in messages:
        if m.id in seen:
            raise ImportFormatError(f"message id {_short(m.id)} occurs twice")
        seen.add(m.id)


# SQLite stores integers as 64-bit: a bigger seq or timestamp cannot be written at all.
_INT64 = range(-(2**63), 2**63)


def _check_numbers(messages: list[Message], imported: ImportedSession) -> None:
    for name in ("created_at", "updated_at"):
        value = getattr(imported, name)
        if value is not None and value not in _INT64:
            raise ImportFormatError(f"session {name} {_short(str(value))} is out of range")
    for m in messages:
        for name in ("seq", "created_at"):
            if getattr(m, name) not in _INT64:
                raise ImportFormatError(
                    f"message {_short(m.id)}: {name} {_short(str(getattr(m, name)))} is out of range"
                )


def _check_links(messages: list[Message], head_id: str | None) -> None:
    """Every parent and the head are in the file, and no chain of parents loops back.

    A loop would make the recursive active-path query run until its depth limit (and load
    millions of rows): a hang on resume, so it is refused here."""
    by_id = {m.id: m for m in messages}
    if head_id is not None and head_id not in by_id:
        raise ImportFormatError(f"the head message {_short(head_id)} is not in the file")
    for m in messages:
        if m.parent_id is not None and m.parent_id not in by_id:
            raise ImportFormatError(f"message {_short(m.id)}: its parent {_short(m.parent_id)} is not in the file")
    done: set[str] = set()
    for m in messages:
        chain: list[str] = []
        on_chain: set[str] = set()
        current: str | None = m.id
        while current is not None and current not in done:
            if current in on_chain:
                raise ImportFormatError(f"message {_short(current)}: its parent links form a cycle")
            on_chain.add(current)
            chain.append(current)
            current = by_id[current].parent_id
        done.update(chain)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    """Lone surrogates (valid JSON escapes, e.g. half an emoji cut by the tool that wrote
    the file) cannot be stored as UTF-8: each becomes U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


# Deeper values (meta is free-form in our own format) could not be loaded back: json.loads
# on the resume path would hit Python's recursion limit.
MAX_NESTING = 100


def _valid_data(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return _valid_text(value)
    if depth > MAX_NESTING and isinstance(value, (dict, list)):
        raise ImportFormatError(f"a value is nested more than {MAX_NESTING} levels deep")
    if isinstance(value, dict):
        return {_valid_data(k): _valid_data(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid_data(v, depth + 1) for v in value]
    return value


def _storable(imported: ImportedSession) -> ImportedSession:
    return ImportedSession.model_validate(_valid_data(imported.model_dump()))


async def import_session(
    store: Any, imported: ImportedSession, *, cwd_default: str, id_map: dict[str, str] | None = None
) -> Session:
    """Write `imported` as a new session and return it.

    Ids are kept when they are free, so that a session moved between machines keeps its
    identity (and a round trip through a fresh database is exact). If any message id is
    already stored, ALL message ids are replaced consistently (parents and head follow);
    tool call ids stay, they only have to be unique within the session. A taken session id
    is replaced by a new one. Raises ImportFormatError, before writing anything, for
    duplicate ids, parent links that dangle or loop, and numbers SQLite cannot hold.
    `id_map`, when given, receives each replaced message id → its new id.
    """
    imported = _storable(imported)  # a fresh copy: the caller's object is left as it was
    messages = imported.messages
    _check_ids(messages)
    _check_numbers(messages, imported)
    head_id = imported.head_id
    _check_links(messages, head_id)
    if messages and await store.existing_message_ids([m.id for m in messages]):
        mapping = {m.id: new_id() for m in messages}
        if id_map is not None:
            id_map.update(mapping)
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
        id=session_id,
        title=imported.title,
        cwd=imported.cwd or cwd_default,
        created_at=created_at,
        updated_at=updated_at,
        head_id=head_id,
        model=imported.model,
        parent_session_id=imported.parent_session_id,
        agent=imported.agent,
        parent_call_id=imported.parent_call_id,
    )
    stored = await store.insert_session(session, messages)
    for child in imported.subagents:  # linked to the session as stored (its id may be new)
        await import_session(
            store, child.model_copy(update={"parent_session_id": stored.id}), cwd_default=cwd_default, id_map=id_map
        )
    return stored
