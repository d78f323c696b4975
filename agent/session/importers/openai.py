"""OpenAI chat-completions messages (JSON) as a cairn session.

Either a list of messages or an object `{"messages": [...], "title"?, "cwd"?, "model"?}`.
Messages have the API shape (role, content, tool_calls, tool_call_id, name) and, as in the
seed examples, may carry `timestamp` (ms epoch) and `messageStatus` (ok/error/interrupted).
Content may be a list of parts; text parts are joined.

The messages become one linear chain (each one's parent is the one before). System
messages are skipped: cairn never stores system prompts, it builds its own for each request.
A message without `timestamp` keeps created_at 0, which the context passes read as "no
age" (SPEC §12.2), rather than pretending it happened at import time.
A tool named `bash` is our `terminal-execute` (the original name stays in meta).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, load_json
from agent.session.models import Message, ToolCall, new_id

TOOL_NAMES = {"bash": "terminal-execute"}
ROLES = ("user", "assistant", "tool")
SKIPPED_ROLES = ("system", "developer")
STATUSES = ("ok", "error", "interrupted")
TITLE_CHARS = 60


def _load(text: str) -> Any:
    try:
        return load_json(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f"line {line}: " if line else ""
        raise ImportFormatError(f"{where}not valid JSON ({str(exc)[:200]})") from None


def _messages_of(data: Any) -> list | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data["messages"]
    return None


def detect(text: str) -> bool:
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return False
    try:
        data = load_json(text)
    except ValueError:
        return False
    items = _messages_of(data)
    return items is not None and all(isinstance(m, dict) and "role" in m for m in items)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "image"):
                parts.append("[image]")
        return "\n".join(parts)
    return str(content)


# Timestamps past the year 9999 (or NaN, infinity, negative) are not times: "no age" (0).
MAX_TIMESTAMP_MS = 253_402_300_799_999


def _timestamp(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        if not 0 < value <= MAX_TIMESTAMP_MS:  # also False for NaN
            return 0
        # Seconds (as some exporters write them) are far smaller than any ms epoch since 1973.
        return int(value * 1000) if value < 1e11 else int(value)
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except (ValueError, OverflowError, OSError):
            return 0
    return 0


def _tool_calls(raw: Any, where: str) -> tuple[list[ToolCall], dict[str, str]]:
    if raw is None:
        return [], {}
    if not isinstance(raw, list):
        raise ImportFormatError(f"{where}: tool_calls must be a list")
    calls, originals = [], {}
    for number, item in enumerate(raw, start=1):
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise ImportFormatError(f"{where}: tool call {number} has no function name")
        original = str(function["name"])
        name = TOOL_NAMES.get(original, original)
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = str(item.get("id") or f"call_{new_id()}")
        if name != original:
            originals[call_id] = original
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
    return calls, originals


def parse(text: str) -> ImportedSession:
    data = _load(text)
    items = _messages_of(data)
    if items is None:
        raise ImportFormatError("expected a JSON list of messages or an object with a 'messages' list")
    header = data if isinstance(data, dict) else {}
    messages: list[Message] = []
    seen: set[str] = set()
    call_names: dict[str, tuple[str, str]] = {}  # call id -> (our name, original name)
    for number, item in enumerate(items, start=1):
        where = f"message {number}"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        role = item.get("role")
        if role in SKIPPED_ROLES:
            continue
        if role not in ROLES:
            raise ImportFormatError(f"{where}: unknown role {role!r}")
        message_id = item.get("id") if isinstance(item.get("id"), str) and item["id"] else new_id()
        if message_id in seen:
            message_id = new_id()
        seen.add(message_id)
        status = item.get("messageStatus") if item.get("messageStatus") in STATUSES else "ok"
        content = _text(item.get("content"))
        message = Message(id=message_id, parent_id=messages[-1].id if messages else None, seq=len(messages) + 1,
                          role=role, content=content, created_at=_timestamp(item.get("timestamp")),
                          status=status, meta={"source": "openai"})
        meta = message.meta
        if role == "assistant":
            message.tool_calls, originals = _tool_calls(item.get("tool_calls"), where)
            for call in message.tool_calls:
                call_names[call.id] = (call.name, originals.get(call.id, call.name))
            if originals:
                meta["original_tool_names"] = originals
        elif role == "tool":
            message.tool_call_id = str(item["tool_call_id"]) if item.get("tool_call_id") else None
            named = item.get("name")
            name, original = call_names.get(message.tool_call_id or "", (None, None))
            if name is None and isinstance(named, str) and named:
                name, original = TOOL_NAMES.get(named, named), named
            message.tool_name = name
            if original and original != name:
                meta["original_tool"] = original
            if "messageStatus" not in item and (content or "").startswith("Error:"):
                message.status = "error"  # SPEC §3: a failure reads `Error:` and has status=error
        messages.append(message)
    if not messages:
        raise ImportFormatError("no user, assistant or tool messages")
    title = header.get("title") if isinstance(header.get("title"), str) else ""
    if not title:
        first = next((m.content for m in messages if m.role == "user" and (m.content or "").strip()), "")
        title = " ".join((first or "").split())[:TITLE_CHARS]
    return ImportedSession(
        title=title, cwd=str(header.get("cwd") or ""), model=str(header.get("model") or ""),
        head_id=messages[-1].id, messages=messages,
    )
