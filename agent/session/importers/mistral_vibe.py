"""Mistral Vibe sessions as cairn sessions: `messages.jsonl` of a session folder
(`~/.vibe/logs/session/<prefix>_<time>_<id>/`, Vibe 2.0 and later), or the single
`<prefix>_<time>_<id>.json` file of Vibe 1.x.

The format, from mistralai/mistral-vibe (vibe/core/session/session_logger.py, session_loader.py,
session_migration.py; vibe/core/types.py: LLMMessage; 1.x: vibe/core/interaction_logger.py):
- `messages.jsonl`: one `LLMMessage.model_dump(exclude_none=True)` per line, system prompt
  left out: `role` (user / assistant / tool), `content` (a string), `message_id`,
  `injected` (a message Vibe added itself: a compaction summary, a hook's or the plan's
  notice), `images` ([{source: {kind, path}, alias, mime_type}]), `reasoning_content` (and
  its provider state `reasoning_state` / `reasoning_signature` / `reasoning_message_id`),
  `tool_calls` (OpenAI shape), `name` + `tool_call_id` on tool results,
  `user_display_content`. The folder's `meta.json` (title, working directory, stats, config)
  has no messages: importing it says to import `messages.jsonl` instead.
- 1.x: one JSON object `{"metadata": {session_id, environment.working_directory, …},
  "messages": [...]}`, the system prompt first.
- A tool result reads `<tool_error>…</tool_error>` when the tool failed and
  `<user_cancellation>…</user_cancellation>` when the user stopped or refused it
  (vibe/core/utils/tags.py): status error / interrupted here, without the tag.

`bash` is our terminal-execute. Injected messages are kept as notes (reported); the system
prompt is reported; a field cairn does not know is kept in the message's meta and reported.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, json_lines, json_object, leading_records
from agent.session.importers.common import Chain, content_text, load_document, openai_calls, timestamp_ms
from agent.session.models import Message

ROLES = ("system", "user", "assistant", "tool")
KNOWN_FIELDS = {
    "role",
    "content",
    "images",
    "injected",
    "reasoning_content",
    "reasoning_state",
    "reasoning_signature",
    "reasoning_message_id",
    "tool_calls",
    "name",
    "tool_call_id",
    "message_id",
    "user_display_content",
}
REASONING_STATE = ("reasoning_state", "reasoning_signature", "reasoning_message_id")
TAGGED = re.compile(r"\A\s*<(tool_error|user_cancellation)>(.*)</\1>\s*\Z", re.S)
DETECT_LINES = 20


def _is_metadata_file(data: dict) -> bool:
    """The `meta.json` beside `messages.jsonl` (no messages of its own)."""
    return (
        isinstance(data.get("session_id"), str)
        and isinstance(data.get("environment"), dict)
        and "messages" not in data
        and "role" not in data
    )


def _is_legacy(data: dict) -> bool:
    meta = data.get("metadata")
    return isinstance(meta, dict) and isinstance(meta.get("session_id"), str) and isinstance(data.get("messages"), list)


def detect(text: str) -> bool:
    whole = json_object(text)
    if whole is not None and "role" not in whole:
        return _is_legacy(whole) or _is_metadata_file(whole)
    records = list(leading_records(text, DETECT_LINES))
    return (
        bool(records)
        and all(r is not None and r.get("role") in ROLES and "type" not in r for r in records)
        and any(r is not None and ("message_id" in r or "injected" in r) for r in records)
    )


class _Session:
    def __init__(self) -> None:
        self.chain = Chain("mistral-vibe")
        self.extra_fields = Counter[str]()

    def meta(self, item: dict) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if item.get("reasoning_content"):
            meta["thinking"] = content_text(item["reasoning_content"])
        state = {k: item[k] for k in REASONING_STATE if item.get(k) is not None}
        if state:
            meta["reasoning_state"] = state
        if item.get("user_display_content") is not None:
            meta["user_display_content"] = item["user_display_content"]
        if isinstance(item.get("images"), list) and item["images"]:
            meta["images"] = item["images"]
        extra = {k: v for k, v in item.items() if k not in KNOWN_FIELDS}
        if extra:
            meta["vibe_fields"] = extra
            self.extra_fields.update(extra.keys())
        return meta

    def add(self, where: str, item: dict) -> None:
        chain = self.chain
        role = item.get("role")
        content = content_text(item.get("content")) or ""
        if role == "system":
            chain.skip(where, "system message", "cairn builds its own system prompt")
            return
        meta = self.meta(item)
        images = [i for i in meta.get("images", []) if isinstance(i, dict)]
        if images:
            marks = [f"[image: {i['alias']}]" if i.get("alias") else "[image]" for i in images]
            content = "\n".join([content, *marks]).strip()
        if role == "user" and item.get("injected"):
            chain.note(
                "user",
                content,
                where=where,
                what="injected message (Vibe's own: compaction summary, hook or plan notice)",
                meta=meta,
            )
        elif role == "user":
            chain.add("user", content, message_id=item.get("message_id"), meta=meta)
        elif role == "assistant":
            message = chain.add("assistant", content, message_id=item.get("message_id"), meta=meta)
            openai_calls(chain, message, item.get("tool_calls"), where)
        elif role == "tool":
            self.result(item, content, meta)
        else:
            chain.note(
                "user",
                f"[{role} message]\n{content}",
                where=where,
                what=f"message with role {role!r}",
                meta={"original": item},
            )

    def result(self, item: dict, content: str, meta: dict[str, Any]) -> Message:
        tagged = TAGGED.match(content)
        tag = tagged.group(1) if tagged else None
        if tagged:
            content = tagged.group(2).strip()
            meta["vibe_tag"] = tag
        return self.chain.result(
            item.get("tool_call_id"),
            content,
            is_error=tag == "tool_error",
            status="interrupted" if tag == "user_cancellation" else None,
            named=item.get("name"),
            message_id=item.get("message_id"),
            meta=meta,
        )


def parse(text: str) -> ImportedSession:
    whole = json_object(text)
    if whole is not None and "role" not in whole:
        if _is_metadata_file(whole):
            raise ImportFormatError(
                "this is a Mistral Vibe meta.json: the conversation is in messages.jsonl "
                "in the same folder; import that file"
            )
        data = load_document(text)
        if not _is_legacy(data):
            raise ImportFormatError(
                "expected a Mistral Vibe session: messages.jsonl, or a 1.x session JSON with 'metadata' and 'messages'"
            )
        items = [(f"message {n}", m) for n, m in enumerate(data["messages"], start=1)]
        header = data["metadata"]
    else:
        items = [(f"line {n}", m) for n, m in json_lines(text)]
        header = {}
    session = _Session()
    for where, item in items:
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        session.add(where, item)
    chain = session.chain
    for field, count in sorted(session.extra_fields.items()):
        chain.skip(
            "session",
            f"field {field!r} on {count} messages",
            "not a Vibe message field cairn knows: kept in the message's meta",
        )
    if not chain.messages:
        raise ImportFormatError("no user or assistant messages in this Mistral Vibe session")
    environment = header.get("environment") if isinstance(header.get("environment"), dict) else {}
    return ImportedSession(
        title=chain.title(header.get("title")),
        cwd=str(environment.get("working_directory") or ""),
        created_at=timestamp_ms(header.get("start_time")) or None,
        head_id=chain.messages[-1].id,
        messages=chain.messages,
        skipped=chain.skipped,
    )
