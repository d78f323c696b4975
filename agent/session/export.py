"""Turning a stored session into a file: lossless JSONL, or a Markdown transcript to read.

JSONL is the backup/move format: every stored message of every branch, every field, so a
session can be imported elsewhere and come back exactly (agent/session/importers/cairn.py).
The sessions of its subagents ride along, one line each after the messages:

    {"type": "subagent", "session": {<Session fields>}, "messages": [{<Message fields>}, ...]}

The output is canonical (sorted keys, compact separators, UTF-8 text, one record per line)
so that export → import → export gives the same bytes.

Context files (seed 004 备份/导入, SPEC §6) ride in the same file, after the messages: one
line per file of the session's folder `<data dir>/context/<session>/` that its manifest
lists, sorted by id (the tool catalog is left out: it is the running cairn's tool set,
rebuilt from it). A reader that knows only messages (`version` stays 1) finds none of these
lines in an older export, and such an export still imports: every file is rebuilt on use.

    {"type": "context-file", "id": "hist-…", "kind": "history", "path": "history/archive/….md",
     "mimeType": "text/markdown", "source": {"first": <message id>, "last": <message id>},
     "created": <ms>, "hint": "…", "encoding": "utf-8" | "base64", "content": "…",
     "sha256": <hex of the content's bytes>, "size": <bytes>}
    {"type": "context-file", "id": "art-…", "kind": "artifact", "path": "artifacts/….log",
     "mimeType": "text/plain", "source": {"messageId": <message id>}, "sha256": …, "size": …}

Images attached to prompts (agent/images.py) ride along too, between the messages and the
context files: one line per blob a message's `meta.images` names, sorted by hash, its bytes
in base64 (the hash is their sha256; the importer checks it and stores the bytes again).

    {"type": "image", "hash": <sha256 hex>, "mime": "image/png", "size": <bytes>,
     "encoding": "base64", "content": "…"}

A history archive (written when a range was condensed: the record the summary names) carries
its bytes — as text when they are UTF-8, base64 otherwise. An artifact is a cache of its
stored message, which is already in the file: its line names it (id, path, sha256, size)
without repeating the output. On import (agent/session/importers/cairn.py) files are written
only inside the new session's folder; an artifact is rebuilt from its imported message, and a
history archive whose content is missing or does not match its sha256 is rebuilt from the
imported messages (the summary's `meta.condensed` range) instead of being trusted.

Markdown is for people: the active path as a reader sees it (callers pass the seed-002
view from `load_session_messages`), with tool calls and results in fenced blocks and an
assistant's thinking (a model that reasons) quoted before its answer, its signatures left
out. It is not meant to be imported again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from agent.session.models import Message, Session, SessionNotice

FORMAT = "cairn-session"
VERSION = 1
SUBAGENT = "subagent"
CONTEXT_FILE = "context-file"
CONTEXT_KINDS = ("artifact", "history")
IMAGE = "image"


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def export_jsonl(
    session: Session,
    messages: list[Message],
    context_files: Sequence[dict] = (),
    images: Sequence[dict] = (),
    subagents: Sequence[tuple[Session, list[Message]]] = (),
) -> str:
    """Header line, then one line per message in seq order (pass `store.all_messages`), then
    one line per subagent's session (its fields and all its messages), the `image_records`
    of the messages and the `context_file_records` of the session's folder."""
    lines = [_line({**session.model_dump(), "type": "session", "format": FORMAT, "version": VERSION})]
    for message in sorted(messages, key=lambda m: m.seq):
        lines.append(_line({**message.model_dump(), "type": "message"}))
    for child, child_messages in subagents:
        lines.append(
            _line(
                {
                    "type": SUBAGENT,
                    "session": child.model_dump(),
                    "messages": [m.model_dump() for m in sorted(child_messages, key=lambda m: m.seq)],
                }
            )
        )
    for record in sorted(images, key=lambda r: r["hash"]):
        lines.append(_line({**record, "type": IMAGE}))
    for record in sorted(context_files, key=lambda r: r["id"]):
        lines.append(_line({**record, "type": CONTEXT_FILE}))
    return "\n".join(lines) + "\n"


async def image_records(messages: list[Message], get_blob: Callable[[str], Awaitable[bytes | None]]) -> list[dict]:
    """The `image` records of the blobs `messages` name (`get_blob`: the store's); a blob the
    store lacks is left out (its messages then show the image's label)."""
    import base64

    from agent.images import refs_of

    mimes = {ref.hash: ref.mime for m in messages for ref in refs_of(m.meta)}  # prompts' and tool results'
    records = []
    for digest in sorted(mimes):
        data = await get_blob(digest)
        if data is not None:
            records.append(
                {
                    "hash": digest,
                    "mime": mimes[digest],
                    "size": len(data),
                    "encoding": "base64",
                    "content": base64.b64encode(data).decode("ascii"),
                }
            )
    return records


def context_file_records(folder: Path) -> list[dict]:
    """The `context-file` records of one session folder, from its manifest (see above).

    Files are opened inside the folder without following links (security.py); a history
    archive that cannot be read is recorded without content (the importer rebuilds it)."""
    import base64
    import hashlib
    import os

    from agent.context.files import manifest, security
    from agent.context.files.refs import kind_of

    records = []
    for ref_id, entry in sorted(manifest.load(folder)["entries"].items()):
        kind = kind_of(ref_id)
        if kind not in CONTEXT_KINDS or not isinstance(entry, dict) or entry.get("kind") != kind:
            continue
        source = entry.get("source") if isinstance(entry.get("source"), dict) else {}
        record = {
            "id": ref_id,
            "kind": kind,
            "path": str(entry.get("path") or ""),
            "source": source,
            "mimeType": entry.get("mimeType"),
            "sha256": entry.get("sha256"),
            "size": entry.get("size"),
        }
        if kind == "history":
            record.update(
                created=int(entry.get("created") or 0), hint=str(entry.get("hint") or ""), encoding=None, content=None
            )
            try:
                fd = security.open_file(folder, record["path"])
                with os.fdopen(fd, "rb") as f:
                    payload = f.read()
            except (OSError, security.ContextFileError):
                payload = None
            if payload is not None:
                try:
                    record.update(encoding="utf-8", content=payload.decode("utf-8"))
                except UnicodeDecodeError:
                    record.update(encoding="base64", content=base64.b64encode(payload).decode("ascii"))
                record.update(sha256=hashlib.sha256(payload).hexdigest(), size=len(payload))
        records.append(record)
    return records


# -- Markdown ---------------------------------------------------------------------------


def _when(ms: int | None) -> str:
    if not ms or ms <= 0:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _fence(text: str, lang: str = "") -> str:
    """A fenced block that the text itself cannot close (longer fence than any run inside)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{lang}\n{body}{fence}"


def _pretty_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments


def _heading(title: str, message: Message) -> str:
    marks = []
    if message.status != "ok":
        marks.append(message.status)
    when = _when(message.created_at)
    suffix = f" ({', '.join(marks)})" if marks else ""
    return f"{title}{suffix}" + (f" · {when}" if when else "")


_TITLES = {"user": "## User", "assistant": "## Assistant", "system": "## System"}


def _quoted(label: str, text: str) -> str:
    """`text` as a Markdown block quote under a bold label: every line (a CR alone ends one in
    Markdown too) starts with `> `, blank ones with `>`, so nothing in it leaves the quote."""
    lines = [f"> **{label}**", ">"]
    lines += [f"> {line}" if line.strip() else ">" for line in re.split(r"\r\n|\r|\n", text.strip("\r\n"))]
    return "\n".join(lines)


def _message_markdown(message: Message) -> str:
    if message.kind == "summary":
        return _heading("## Summary", message) + "\n\n" + (message.content or "")
    if message.kind == "note":
        return _heading("## Note", message) + "\n\n" + (message.content or "")
    if message.role == "tool":
        name = message.tool_name or "tool"
        label = "Error from" if message.status == "error" else "Result of"
        head = _heading(f"### {label} `{name}`", message)
        return f"{head}\n\n{_fence(message.content or '')}"
    parts = [_heading(_TITLES.get(message.role, "## " + message.role.title()), message)]
    thinking = message.meta.get("thinking") if message.role == "assistant" else None
    if isinstance(thinking, str) and thinking.strip():
        parts.append(_quoted("Thinking", thinking))
    if message.content:
        parts.append(message.content)
    for call in message.tool_calls:
        parts.append(
            f"**Tool call** `{call.name}` (`{call.id}`)\n\n{_fence(_pretty_arguments(call.arguments), 'json')}"
        )
    return "\n\n".join(parts)


def export_markdown(
    session: Session,
    messages: list[Message],
    subagents: Sequence[tuple[Session, list[Message]]] = (),
    notices: Sequence[SessionNotice] = (),
) -> str:
    """A transcript of `messages` (the active path) under a short header about the session,
    then each subagent's transcript (`subagents`: the session and its active path).
    `notices`: what the turns told the user (errors, hooks' actions), each quoted after the
    message it followed."""
    text = _transcript(session, messages, "#", notices)
    for child, child_messages in subagents:
        text += "\n---\n\n" + _transcript(child, child_messages, "# Subagent:")
    return text


def _notice_markdown(notice: SessionNotice) -> str:
    return _quoted({"error": "Error", "warning": "Warning"}.get(notice.kind, "Note"), notice.text)


def _transcript(session: Session, messages: list[Message], title: str, notices: Sequence[SessionNotice] = ()) -> str:
    lines = [f"{title} {session.title or 'Untitled session'}", ""]
    facts = [
        ("Session", f"`{session.id}`"),
        ("Folder", f"`{session.cwd}`" if session.cwd else ""),
        ("Model", session.model),
        ("Agent", f"`{session.agent}` (for the call `{session.parent_call_id}`)" if session.agent else ""),
        ("Created", _when(session.created_at)),
        ("Updated", _when(session.updated_at)),
        ("Messages", str(len(messages))),
    ]
    lines += [f"- **{name}:** {value}" for name, value in facts if value]
    said: dict[str | None, list[str]] = {}
    for notice in notices:
        said.setdefault(notice.after_id, []).append(_notice_markdown(notice))
    body = said.pop(None, [])
    for m in messages:
        body += [_message_markdown(m), *said.pop(m.id, [])]
    return "\n".join(lines) + "\n\n---\n\n" + "\n\n".join(body) + ("\n" if body else "")
