"""A tool call's result as the text the model reads.

Text blocks are joined; an image, audio or embedded resource is described in one line (its
type, size, and the resource's text when it has one), so nothing binary reaches the history.
The whole is cut at `mcp.max_result_chars` (a 10 MB answer must not land in SQLite and in
every later build); what stays longer than `context.max_inline_chars` is externalised as a
context file like any tool output (agent/context/passes/externalize.py).
"""

from __future__ import annotations

import json
from typing import Any

MAX_RESOURCE_TEXT_CHARS = 100_000


def _size_of_base64(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "unknown type"
        size = _size_of_base64(getattr(block, "data", "") or "")
        return f"[{kind}: {mime}, {size:,} bytes; not shown to the model]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = str(getattr(resource, "uri", "") or "")
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            cut = text[:MAX_RESOURCE_TEXT_CHARS]
            more = f"\n[… {len(text) - len(cut):,} more characters]" if len(text) > len(cut) else ""
            return f"[resource {uri}]\n{cut}{more}"
        blob = getattr(resource, "blob", "") or ""
        mime = getattr(resource, "mime_type", None) or "unknown type"
        return f"[resource {uri}: {mime}, {_size_of_base64(blob):,} bytes of binary data]"
    if kind == "resource_link":
        return f"[resource link: {getattr(block, 'uri', '')} {getattr(block, 'name', '')}]".rstrip()
    return f"[{kind or 'unknown'} content]"


def result_text(result: Any, max_chars: int) -> tuple[str, bool, dict[str, Any]]:
    """(text, is_error, meta) of a CallToolResult."""
    parts = [block_text(b) for b in (getattr(result, "content", None) or [])]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        try:
            parts = [json.dumps(structured, ensure_ascii=False)]
        except (TypeError, ValueError):
            parts = [str(structured)]
    text = "\n".join(parts) if parts else "(the tool returned no content)"
    meta: dict[str, Any] = {}
    if len(text) > max_chars:
        meta["mcp_cut_chars"] = len(text)
        text = (text[:max_chars] + f"\n[… cut: the result was {len(text):,} characters; "
                f"cairn keeps the first {max_chars:,} (mcp.max_result_chars)]")
    kinds = sorted({getattr(b, "type", "") for b in (getattr(result, "content", None) or [])} - {"text"})
    if kinds:
        meta["mcp_content"] = kinds
    return text, bool(getattr(result, "is_error", False)), meta

