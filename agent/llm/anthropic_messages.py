"""OpenAI-form messages and tools (what cairn stores and builds) in Anthropic's Messages form.

The rules litellm 1.106.2 applies for Claude (its `anthropic_messages_pt`), kept where a
request depends on them: system messages become the top-level `system` blocks; a tool
result is a `tool_result` block in a user turn, and consecutive user-side messages share
one turn; an assistant's signed thinking blocks come first, then its text, then `tool_use`
blocks; blank text is dropped (Anthropic refuses empty text blocks); `cache_control` marks
stay on the block they were written on (agent/llm/caching.py puts them where this keeps
them); images become base64 or URL image blocks, a PDF `file` part a document block; tool-use
ids are reduced to the characters Anthropic accepts, the same way on both sides of a call.

Pure functions, standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.llm.reasoning import META_THINKING_BLOCKS, complete_blocks
from agent.llm.server_search import META_SERVER_BLOCKS, paired

_TOOL_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_DATA_URL = re.compile(r"^data:(?P<type>[\w/+.-]+);base64,(?P<data>.*)$", re.DOTALL)
CACHE_CONTROL = "cache_control"


def tool_id(value: str | None) -> str:
    return _TOOL_ID_UNSAFE.sub("_", value or "") or "tool"


def convert(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, messages, tools) for the Messages API."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            system += _text_blocks(message.get("content"), message)
            continue
        if role == "assistant":
            blocks = _assistant_blocks(message)
            side = "assistant"
        elif role == "tool":
            blocks = [_tool_result(message)]
            side = "user"
        else:
            blocks = _user_blocks(message)
            side = "user"
        if not blocks:
            continue
        if turns and turns[-1]["role"] == side:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": side, "content": blocks})
    return system, turns, [_tool(t) for t in tools]


def _mark(block: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    if source.get(CACHE_CONTROL):
        block[CACHE_CONTROL] = source[CACHE_CONTROL]
    return block


def _text_blocks(content: Any, message: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Text content as blocks; a message-level mark goes on its last block."""
    blocks: list[dict[str, Any]]
    if isinstance(content, str):
        blocks = [{"type": "text", "text": content}] if content.strip() else []
    else:
        converted = (_content_block(part) for part in content or () if isinstance(part, dict))
        blocks = [b for b in converted if b is not None]
    if blocks and message is not None and message.get(CACHE_CONTROL):
        blocks[-1] = _mark(dict(blocks[-1]), message)
    return blocks


def _content_block(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text") or ""
        return _mark({"type": "text", "text": text}, part) if text.strip() else None
    if kind == "image_url":
        return _mark(_image(part.get("image_url")), part)
    if kind == "file":
        return _mark(_document(part.get("file")), part)
    if kind in ("image", "document"):  # already Anthropic's
        return dict(part)
    return None


def _document(value: Any) -> dict[str, Any]:
    """An OpenAI `file` part (a PDF as a data URL, agent/context/rendered.py) as a document block."""
    url = value.get("file_data") if isinstance(value, dict) else None
    match = _DATA_URL.match(url if isinstance(url, str) else "")
    media_type, data = (match["type"], match["data"]) if match else ("application/pdf", "")
    return {"type": "document", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _image(value: Any) -> dict[str, Any]:
    url = value.get("url") if isinstance(value, dict) else value
    url = url if isinstance(url, str) else ""
    match = _DATA_URL.match(url)
    if match:
        return {"type": "image", "source": {"type": "base64", "media_type": match["type"], "data": match["data"]}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _user_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    return _text_blocks(message.get("content"), message)


def _assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [dict(b) for b in complete_blocks(message.get(META_THINKING_BLOCKS) or [])]
    # Claude's server-side searches, as they came (agent/llm/server_search.py): after its thinking.
    blocks += [dict(b) for b in paired(message.get(META_SERVER_BLOCKS) or [])]
    calls = [c for c in message.get("tool_calls") or () if isinstance(c, dict)]
    # A message-level mark belongs on its last block: the last tool_use when it has calls.
    text = _text_blocks(message.get("content"), None if calls else message)
    blocks += text
    for call in calls:
        function = call.get("function") or {}
        blocks.append(
            _mark(
                {
                    "type": "tool_use",
                    "id": tool_id(call.get("id")),
                    "name": function.get("name") or "",
                    "input": _arguments(function.get("arguments")),
                },
                call,
            )
        )
    if calls and message.get(CACHE_CONTROL) and CACHE_CONTROL not in blocks[-1]:
        blocks[-1] = _mark(blocks[-1], message)
    return blocks


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _tool_result(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        result: Any = [b for b in (_content_block(p) for p in content if isinstance(p, dict)) if b is not None]
    else:
        result = content if isinstance(content, str) else ""
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_id(message.get("tool_call_id")),
        "content": result,
    }
    return _mark(block, message)


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or {}
    out: dict[str, Any] = {
        "type": "custom",  # a tool cairn runs (not one of Anthropic's server tools)
        "name": function.get("name") or "",
        "description": function.get("description") or "",
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    return _mark(out, tool)
