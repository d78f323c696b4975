"""Our own JSONL export (agent/session/export.py), read back losslessly.

A header line `{"type": "session", "format": "cairn-session", "version": 1, ...}` with every
Session field, then one `{"type": "message", ...}` line per stored message (all branches).
Everything is kept as written — ids, links, seq, timestamps, meta — so that export →
import → export is byte-identical. `{"type": "subagent", "session": …, "messages": […]}`
lines carry the sessions of the subagents it ran; they are stored under the imported session.

Then, optionally, `{"type": "image", ...}` lines (the blobs of attached images) and
`{"type": "context-file", ...}` lines: the session's context files (format
in agent/session/export.py). An export without them (older cairn) imports as before; their
files are rebuilt from the store on first use. `parse` only checks their shape (an image's
bytes against its hash) and returns both kinds in `context_files` (an image's has `kind`
"image"); `restore_context_files` stores the images in the blob table and writes the files
under the new session's folder once the session is stored.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.session.importers import ImportedSession, ImportFormatError, json_lines, load_json
from agent.session.models import Message, Session

FORMAT = "cairn-session"
VERSION = 1
SUBAGENT = "subagent"
CONTEXT_FILE = "context-file"
IMAGE = "image"


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
    context_files: list[dict] = []
    subagents: list[ImportedSession] = []
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
            elif kind == SUBAGENT:
                subagents.append(_subagent(number, record))
            elif kind == CONTEXT_FILE:
                context_files.append(_context_record(number, record))
            elif kind == IMAGE:
                context_files.append(_image_record(number, record))
            else:
                raise ImportFormatError(f"line {number}: unexpected record type {kind!r}")
        except ValidationError as exc:
            raise ImportFormatError(f"line {number}: {_validation_message(exc)}") from None
    if header is None:
        raise ImportFormatError("not a cairn session export (no session header)")
    return ImportedSession(
        id=header.id,
        title=header.title,
        cwd=header.cwd,
        model=header.model,
        created_at=header.created_at,
        updated_at=header.updated_at,
        parent_session_id=header.parent_session_id,
        agent=header.agent,
        parent_call_id=header.parent_call_id,
        head_id=header.head_id,
        messages=messages,
        context_files=context_files,
        subagents=subagents,
    )


def _subagent(number: int, record: dict) -> ImportedSession:
    """A `subagent` record: a subagent's session and all its messages, on one line."""
    if not isinstance(record.get("session"), dict) or not isinstance(record.get("messages"), list):
        raise ImportFormatError(f"line {number}: a subagent record needs a session and its messages")
    child = Session.model_validate(record["session"])
    return ImportedSession(
        source="cairn",
        id=child.id,
        title=child.title,
        cwd=child.cwd,
        model=child.model,
        created_at=child.created_at,
        updated_at=child.updated_at,
        agent=child.agent or "subagent",
        parent_call_id=child.parent_call_id,
        head_id=child.head_id,
        messages=[Message.model_validate(m) for m in record["messages"]],
    )


# -- context files ----------------------------------------------------------------------


def _context_record(number: int, record: dict) -> dict:
    from agent.context.files.refs import kind_of

    ref_id = record.get("id")
    kind = kind_of(ref_id)
    if kind not in ("artifact", "history") or record.get("kind") != kind:
        raise ImportFormatError(f"line {number}: not a context file id {str(ref_id)[:80]!r}")
    if not isinstance(record.get("source", {}), dict) or not isinstance(record.get("path", ""), str):
        raise ImportFormatError(f"line {number}: context file {ref_id}: bad source or path")
    content, encoding = record.get("content"), record.get("encoding")
    if content is not None and (not isinstance(content, str) or encoding not in ("utf-8", "base64")):
        raise ImportFormatError(f"line {number}: context file {ref_id}: content must be utf-8 or base64 text")
    return {k: v for k, v in record.items() if k != "type"}


def _image_record(number: int, record: dict) -> dict:
    """An image line, its bytes decoded and checked against its hash (sha256)."""
    digest = record.get("hash")
    data = _payload(record) if record.get("encoding") == "base64" else None
    if not isinstance(digest, str) or data is None or hashlib.sha256(data).hexdigest() != digest:
        raise ImportFormatError(f"line {number}: image {str(digest)[:80]!r}: content missing or not matching its hash")
    return {"kind": IMAGE, "hash": digest, "data": data}


def _payload(record: dict) -> bytes | None:
    content = record.get("content")
    if not isinstance(content, str):
        return None
    if record.get("encoding") == "base64":
        try:
            return base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            return None
    return content.encode("utf-8", errors="surrogatepass")


async def restore_context_files(
    store: Any,
    session: Session,
    records: list[dict],
    *,
    settings: Any,
    id_map: dict[str, str] | None = None,
    root: Path | None = None,
) -> list[str]:
    """Write `records` (from `parse`) as `session`'s context files; returns notes for the user.

    A history archive is written as carried when its bytes match its sha256 and its path is
    a plain relative path inside the session's folder (security.py refuses anything else);
    otherwise it is rebuilt from the imported messages. Artifacts are rebuilt from their
    imported messages (the store is the source of truth) and checked against the sha256.
    Message ids replaced on import (`id_map`) are followed; ref ids named in the messages'
    text stay as they were, so a summary's `hist-…` keeps resolving."""
    from agent.context.files import manifest, security
    from agent.context.files.manager import ContextFileError, ContextFiles
    from agent.context.files.refs import artifact_ref_id
    from agent.session.models import now_ms

    images = [r["data"] for r in records if r.get("kind") == IMAGE]
    if images:
        await store.put_blobs(images)
    records = [r for r in records if r.get("kind") != IMAGE]
    if not records:
        return []
    id_map = id_map or {}
    files = ContextFiles(store, session.id, settings=settings, root=root)
    data = manifest.load(files.folder)
    notes: list[str] = []
    rebuild: dict[str, str | None] = {}  # ref id → the sha256 the export recorded
    now = now_ms()
    for record in records:
        ref_id, source = record["id"], record.get("source") or {}
        if record["kind"] == "artifact":
            message_id = str(source.get("messageId") or "")
            if message_id:
                rebuild[artifact_ref_id(id_map.get(message_id, message_id))] = record.get("sha256")
            continue
        payload, path = _payload(record), str(record.get("path") or "")
        if payload is None or hashlib.sha256(payload).hexdigest() != record.get("sha256"):
            notes.append(f"context file {ref_id}: content missing or not matching its sha256; rebuilt from the session")
            rebuild[ref_id] = None
            continue
        try:
            if security.parts_of(path)[:2] != ["history", "archive"]:
                raise ContextFileError(f"unexpected path {security.shown(path)}")
            security.write_atomic(files.folder, path, payload)
        except (ContextFileError, OSError) as exc:
            notes.append(f"context file {ref_id}: not restored ({exc}); rebuilt from the session")
            rebuild[ref_id] = None
            continue
        data["entries"][ref_id] = {
            "kind": "history",
            "path": path,
            "source": {k: id_map.get(str(v), str(v)) for k, v in source.items() if k in ("first", "last")},
            "sha256": record["sha256"],
            "size": len(payload),
            "created": int(record.get("created") or now),
            "accessed": now,
            "policy": "eager",
            "mimeType": str(record.get("mimeType") or "text/markdown"),
            "hint": str(record.get("hint") or "conversation archive"),
        }
    manifest.save(files.folder, data)
    for ref_id, expected in rebuild.items():
        try:
            await files.read(ref_id, limit=1)
        except ContextFileError as exc:
            notes.append(f"context file {ref_id}: could not be rebuilt ({exc})")
            continue
        entry = manifest.load(files.folder)["entries"].get(ref_id) or {}
        if expected is not None and entry.get("sha256") != expected:
            notes.append(f"context file {ref_id}: rebuilt from the session; it differs from the exported one")
    return notes
