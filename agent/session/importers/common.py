"""What the JSON-shaped importers share: the message chain they build, and the readers of
chat content (OpenAI parts, Anthropic blocks), timestamps and tool arguments.

`Chain` makes the messages one after another (each one's parent is the one before), so that
a tool result finds the name of the call it answers and every item left out is reported with
its reason (report.py). `add_item` reads one chat message in the OpenAI or Anthropic shape;
openai, swe_agent, mini_swe_agent, codex, gemini_cli and mistral_vibe build on these.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from agent.session.importers import ImportFormatError, load_json
from agent.session.models import Message, ToolCall, new_id

TOOL_NAMES = {"bash": "terminal-execute"}
STATUSES = ("ok", "error", "interrupted")
TITLE_CHARS = 60
TEXT_PARTS = ("text", "input_text", "output_text")
IMAGE_PARTS = ("image_url", "input_image", "image")
THINKING_PARTS = ("thinking", "redacted_thinking", "reasoning")


def load_document(text: str) -> Any:
    try:
        return load_json(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        where = f"line {line}: " if line else ""
        raise ImportFormatError(f"{where}not valid JSON ({str(exc)[:200]})") from None


def content_text(content: Any) -> str | None:
    """The text of a content value (text parts joined; an image is `[image]`)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in TEXT_PARTS:
                parts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") in IMAGE_PARTS:
                parts.append("[image]")
        return "\n".join(parts)
    return str(content)


def result_text(content: Any) -> str:
    """A tool result's content: text blocks joined; anything else (e.g. Cline's list of
    {query, result} records) kept whole as JSON rather than losing it."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, str) or (isinstance(p, dict) and p.get("type") in TEXT_PARTS + IMAGE_PARTS) for p in content
    ):
        return content_text(content) or ""
    return json.dumps(content, ensure_ascii=False)


# Timestamps past the year 9999 (or NaN, infinity, negative) are not times: "no age" (0).
MAX_TIMESTAMP_MS = 253_402_300_799_999


def timestamp_ms(value: Any) -> int:
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


def arguments_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value if value is not None else {}, ensure_ascii=False)


class Chain:
    """Messages made one after another (each one's parent is the one before), the tool calls
    seen so far (so that results get their tool's name) and what was skipped, with why."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.messages: list[Message] = []
        self.seen: set[str] = set()
        self.skipped: list[dict[str, str]] = []
        self.call_names: dict[str, tuple[str, str]] = {}  # call id -> (our name, original name)

    def skip(self, where: str, what: str, reason: str) -> None:
        self.skipped.append({"where": where, "what": what, "reason": reason})

    def add(
        self,
        role: str,
        content: str | None,
        *,
        message_id: Any = None,
        created_at: int = 0,
        status: str = "ok",
        kind: str = "message",
        meta: dict | None = None,
    ) -> Message:
        if not isinstance(message_id, str) or not message_id or message_id in self.seen:
            message_id = new_id()
        self.seen.add(message_id)
        message = Message(
            id=message_id,
            parent_id=self.messages[-1].id if self.messages else None,
            seq=len(self.messages) + 1,
            role=role,
            content=content,
            created_at=created_at,
            status=status,
            kind=kind,
            meta={"source": self.source, **(meta or {})},
        )
        self.messages.append(message)
        return message

    def call(
        self, message: Message, call_id: Any, original: str, arguments: Any, *, name: str | None = None
    ) -> ToolCall:
        """Add a tool call to the assistant `message` (a `bash` tool is our terminal-execute;
        `name`: our tool the importer mapped `original` to, its arguments mapped too)."""
        name = name or TOOL_NAMES.get(original, original)
        call_id = str(call_id) if call_id else f"call_{new_id()}"
        call = ToolCall(id=call_id, name=name, arguments=arguments_json(arguments))
        message.tool_calls.append(call)
        self.call_names[call_id] = (name, original)
        if name != original:
            message.meta.setdefault("original_tool_names", {})[call_id] = original
        return call

    def result(
        self,
        call_id: Any,
        content: str,
        *,
        is_error: bool = False,
        named: Any = None,
        message_id: Any = None,
        created_at: int = 0,
        status: str | None = None,
        meta: dict | None = None,
    ) -> Message:
        """A tool message answering `call_id`; a failure reads `Error: …` (SPEC §3)."""
        call_id = str(call_id) if call_id else None
        name, original = self.call_names.get(call_id or "", (None, None))
        if name is None and isinstance(named, str) and named:
            name, original = TOOL_NAMES.get(named, named), named
        if is_error and not content.startswith("Error:"):
            content = f"Error: {content}"
        message = self.add(
            "tool",
            content,
            message_id=message_id,
            created_at=created_at,
            status=status or ("error" if is_error else "ok"),
            meta=meta,
        )
        message.tool_call_id = call_id
        message.tool_name = name
        if original and original != name:
            message.meta["original_tool"] = original
        return message

    def note(
        self, role: str, content: str, *, where: str, what: str, created_at: int = 0, meta: dict | None = None
    ) -> Message:
        """Something cairn has no place for, kept as a `kind=note` message and reported."""
        self.skip(where, what, "kept as a note message")
        return self.add(
            role if role in ("user", "assistant") else "user", content, created_at=created_at, kind="note", meta=meta
        )

    def title(self, header_title: Any = "") -> str:
        if isinstance(header_title, str) and header_title:
            return header_title
        first = next(
            (
                m.content
                for m in self.messages
                if m.role == "user" and m.kind == "message" and (m.content or "").strip()
            ),
            "",
        )
        return " ".join((first or "").split())[:TITLE_CHARS]


def openai_calls(chain: Chain, message: Message, raw: Any, where: str) -> None:
    if raw is None:
        return
    if not isinstance(raw, list):
        raise ImportFormatError(f"{where}: tool_calls must be a list")
    for number, item in enumerate(raw, start=1):
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise ImportFormatError(f"{where}: tool call {number} has no function name")
        chain.call(message, item.get("id"), str(function["name"]), function.get("arguments", ""))


def add_item(chain: Chain, item: dict, where: str, *, role: str = "") -> list[Message]:
    """One chat message (OpenAI or Anthropic shape) onto `chain`: the messages it became."""
    role = role or item.get("role") or ""  # callers checked it: one of ROLES
    made: list[Message] = []
    created_at = timestamp_ms(item["timestamp"] if "timestamp" in item else item.get("ts"))
    status = item["messageStatus"] if item.get("messageStatus") in STATUSES else "ok"
    content = item.get("content")
    blocks = content if isinstance(content, list) else None
    texts: list[str] = []
    images: list[Any] = []
    thinking: list[str] = []
    uses: list[dict] = []
    results: list[dict] = []
    unknown: list[Any] = []
    if blocks is None:
        if content is not None and not isinstance(content, str):
            content = str(content)
    else:
        for part in blocks:
            kind = part.get("type") if isinstance(part, dict) else None
            if isinstance(part, str):
                texts.append(part)
            elif kind in TEXT_PARTS:
                texts.append(str(part.get("text", "")))
            elif kind in IMAGE_PARTS:
                texts.append("[image]")
                images.append(part)
            elif kind in THINKING_PARTS:
                thinking.append(str(part.get("thinking") or part.get("text") or part.get("data") or ""))
            elif kind == "tool_use" and role == "assistant":
                uses.append(part)
            elif kind == "tool_result" and role in ("user", "tool"):
                results.append(part)
            elif kind == "file" and isinstance(part.get("content"), str):
                texts.append(f"[file: {part.get('path', '')}]\n{part['content']}")
            else:
                unknown.append(part)
        content = "\n".join(texts) if texts or not (uses or results) else None
    message_id = item.get("id")

    def next_id() -> Any:  # the item's id for its first message, `id:n` for further ones
        if not isinstance(message_id, str) or not message_id:
            return None
        return message_id if not made else f"{message_id}:{len(made)}"

    for block in results:
        made.append(
            chain.result(
                block.get("tool_use_id"),
                result_text(block.get("content")),
                is_error=bool(block.get("is_error")),
                named=block.get("name"),
                message_id=next_id(),
                created_at=created_at,
            )
        )
    if role == "tool":
        if not results:
            text = content_text(content) or ""
            tool = chain.result(
                item.get("tool_call_id"),
                text,
                named=item.get("name"),
                message_id=next_id(),
                created_at=created_at,
                status=status,
            )
            if "messageStatus" not in item and text.startswith("Error:"):
                tool.status = "error"  # SPEC §3: a failure reads `Error:` and has status=error
            made.append(tool)
    elif role == "assistant" or (content or "").strip() or images or not results:
        meta: dict[str, Any] = {}
        if images:
            meta["images"] = images
        if thinking:
            meta["thinking"] = "\n\n".join(thinking)
        info = item.get("modelInfo")
        model = item.get("model") or (info.get("id") if isinstance(info, dict) else None)
        if isinstance(model, str) and model:
            meta["model"] = model
        message = chain.add(role, content, message_id=next_id(), created_at=created_at, status=status, meta=meta)
        if role == "assistant":
            openai_calls(chain, message, item.get("tool_calls"), where)
            for block in uses:
                chain.call(message, block.get("id"), str(block.get("name") or "tool"), block.get("input"))
        made.append(message)
    for part in unknown:
        kind = part.get("type") if isinstance(part, dict) else type(part).__name__
        made.append(
            chain.note(
                role,
                f"[{kind} block]\n{json.dumps(part, ensure_ascii=False)}",
                where=where,
                what=f"{kind} block",
                created_at=created_at,
                meta={"block": part},
            )
        )
    return made
