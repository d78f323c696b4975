"""Turning a stored session into a file: lossless JSONL, or a Markdown transcript to read.

JSONL is the backup/move format: every stored message of every branch, every field, so a
session can be imported elsewhere and come back exactly (agent/session/importers/cairn.py).
The output is canonical (sorted keys, compact separators, UTF-8 text, one record per line)
so that export → import → export gives the same bytes.

Markdown is for people: the active path as a reader sees it (callers pass the seed-002
view from `load_session_messages`), with tool calls and results in fenced blocks. It is
not meant to be imported again.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from agent.session.models import Message, Session

FORMAT = "cairn-session"
VERSION = 1


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def export_jsonl(session: Session, messages: list[Message]) -> str:
    """Header line, then one line per message in seq order (pass `store.all_messages`)."""
    lines = [_line({**session.model_dump(), "type": "session", "format": FORMAT, "version": VERSION})]
    for message in sorted(messages, key=lambda m: m.seq):
        lines.append(_line({**message.model_dump(), "type": "message"}))
    return "\n".join(lines) + "\n"


# -- Markdown ---------------------------------------------------------------------------

def _when(ms: int | None) -> str:
    if not ms or ms <= 0:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


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
    if message.content:
        parts.append(message.content)
    for call in message.tool_calls:
        parts.append(f"**Tool call** `{call.name}` (`{call.id}`)\n\n{_fence(_pretty_arguments(call.arguments), 'json')}")
    return "\n\n".join(parts)


def export_markdown(session: Session, messages: list[Message]) -> str:
    """A transcript of `messages` (the active path) under a short header about the session."""
    lines = [f"# {session.title or 'Untitled session'}", ""]
    facts = [("Session", f"`{session.id}`"), ("Folder", f"`{session.cwd}`" if session.cwd else ""),
             ("Model", session.model), ("Created", _when(session.created_at)),
             ("Updated", _when(session.updated_at)), ("Messages", str(len(messages)))]
    lines += [f"- **{name}:** {value}" for name, value in facts if value]
    body = [_message_markdown(m) for m in messages]
    return "\n".join(lines) + "\n\n---\n\n" + "\n\n".join(body) + ("\n" if body else "")
