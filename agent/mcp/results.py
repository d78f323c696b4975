"""A tool call's result as the text the model reads.

Text blocks are joined; audio or an embedded resource is described in one line (its type,
size, and the resource's text when it has one), so nothing binary reaches the text. An image
is checked like a prompt's (agent/images.py `decode_image`: its bytes say what it is, the
size is capped) and becomes an attachment: its `[image: name, WxH]` line stands in the text,
its bytes go to the store's blob table and its `ImageRef` to the tool message's meta, and a
request for a model that sees images carries it (agent/context/rendered.py). An image that
fails the checks is one line saying why. The whole text is cut at `mcp.max_result_chars` (a
10 MB answer must not land in SQLite and in every later build); what stays longer than
`context.max_inline_chars` is externalised as a context file like any tool output (agent/context/passes/externalize.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent.images import MAX_IMAGES_PER_PROMPT, META_KEY, Attachment, ImageError, decode_image

MAX_RESOURCE_TEXT_CHARS = 100_000
# A result attaches at most as many images as a prompt may; the rest are described.
MAX_IMAGES_PER_RESULT = MAX_IMAGES_PER_PROMPT
# What a server says an image is, repeated in the line about a refused one (a type is short).
MAX_CLAIMED_TYPE_CHARS = 100


@dataclass
class ResultContent:
    """A CallToolResult as cairn keeps it: the text the model reads, and the images it attaches."""

    text: str
    is_error: bool
    meta: dict[str, Any]
    images: list[Attachment] = field(default_factory=list)


def _size_of_base64(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def _image(block: Any, stem: str, images: list[Attachment]) -> str:
    """The image's label, its attachment added to `images`; or a line saying why it is not shown."""
    encoded = getattr(block, "data", "") or ""
    claimed = str(getattr(block, "mime_type", None) or "unknown type")[:MAX_CLAIMED_TYPE_CHARS]
    if len(images) >= MAX_IMAGES_PER_RESULT:
        reason = f"more than {MAX_IMAGES_PER_RESULT} images in one result"
    else:
        try:
            attachment = decode_image(encoded if isinstance(encoded, str) else "", f"{stem}-{len(images) + 1}")
        except ImageError as exc:
            reason = str(exc)
        else:
            images.append(attachment)
            return attachment.ref.label
    return f"[image: {claimed}, {_size_of_base64(str(encoded)):,} bytes; not shown: {reason}]"


def block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "audio":
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


def read_result(result: Any, max_chars: int, *, image_stem: str) -> ResultContent:
    """What cairn keeps of a CallToolResult; its images are named `<image_stem>-<n>.<suffix>`."""
    images: list[Attachment] = []
    parts = [
        _image(b, image_stem, images) if getattr(b, "type", None) == "image" else block_text(b)
        for b in (getattr(result, "content", None) or [])
    ]
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
        text = (
            text[:max_chars] + f"\n[… cut: the result was {len(text):,} characters; "
            f"cairn keeps the first {max_chars:,} (mcp.max_result_chars)]"
        )
    kinds = sorted({getattr(b, "type", "") for b in (getattr(result, "content", None) or [])} - {"text"})
    if kinds:
        meta["mcp_content"] = kinds
    if images:
        meta[META_KEY] = [a.ref.model_dump() for a in images]
    return ResultContent(text=text, is_error=bool(getattr(result, "is_error", False)), meta=meta, images=images)
