"""OpenAI chat-completions messages (JSON), with Anthropic content blocks, as a cairn session.

Either a list of messages or an object `{"messages": [...], "title"?, "cwd"?, "model"?}`.
Messages have the API shape (role, content, tool_calls, tool_call_id, name) and, as in the
seed examples, may carry `timestamp` (ms epoch; `ts` as Cline writes it) and `messageStatus`
(ok/error/interrupted). Content may be a string or a list of parts:
- text parts (`text`, `input_text`, `output_text`) are joined;
- Anthropic blocks, as Cline's `session.messages.json` holds them: `tool_use` (assistant)
  becomes a tool call with its `input` as JSON arguments, `tool_result` (user) becomes a tool
  message (status error, content `Error: …`, when `is_error`), `thinking` goes to meta;
- images become an `[image]` mark in the text, the block itself is kept in meta["images"];
- a `file` part (a file attached to the prompt) is kept in the text, under its path;
- any other part is kept as a `kind=note` message after its message, and reported.

The messages become one linear chain (each one's parent is the one before). System
messages are skipped, and reported: cairn never stores system prompts, it builds its own for
each request. A message without `timestamp` keeps created_at 0, which the context passes read
as "no age" (SPEC §12.2), rather than pretending it happened at import time.
A tool named `bash` is our `terminal-execute` (the original name stays in meta).

The message chain and the content readers live in common.py, shared with the other importers.
"""

from __future__ import annotations

from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, load_json
from agent.session.importers.common import Chain, add_item, load_document

ROLES = ("user", "assistant", "tool")
SKIPPED_ROLES = ("system", "developer")


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


def parse(text: str) -> ImportedSession:
    data = load_document(text)
    items = _messages_of(data)
    if items is None:
        raise ImportFormatError("expected a JSON list of messages or an object with a 'messages' list")
    header = data if isinstance(data, dict) else {}
    chain = Chain("openai")
    if isinstance(header.get("system_prompt"), str):
        chain.skip("header", "system prompt", "cairn builds its own system prompt")
    for number, item in enumerate(items, start=1):
        where = f"message {number}"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        role = item.get("role")
        if role in SKIPPED_ROLES:
            chain.skip(where, f"{role} message", "cairn builds its own system prompt")
            continue
        if role not in ROLES:
            raise ImportFormatError(f"{where}: unknown role {role!r}")
        add_item(chain, item, where)
    if not chain.messages:
        raise ImportFormatError("no user, assistant or tool messages")
    model = header.get("model") or next((m.meta["model"] for m in chain.messages if "model" in m.meta), "")
    return ImportedSession(
        title=chain.title(header.get("title")),
        cwd=str(header.get("cwd") or ""),
        model=str(model),
        head_id=chain.messages[-1].id,
        messages=chain.messages,
        skipped=chain.skipped,
    )
