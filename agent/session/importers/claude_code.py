"""Claude Code session files (`~/.claude/projects/<folder>/<session>.jsonl`) as cairn sessions.

One JSON event per line. `user` and `assistant` lines carry an Anthropic message and link
to their parent line through `uuid`/`parentUuid`; every other type (summary, system,
file-history-snapshot, ...) is skipped, and lines linking to a skipped one link through it.

Three things differ from our model, and the parser bridges them:
- One API response is written as several assistant lines sharing `message.id`, one content
  block each. They become ONE assistant message (texts joined, tool calls collected).
- Parallel tool results are written as sibling lines, each pointing at the assistant line
  of its own call, so a plain parent mapping would leave all but one result off the active
  path (and seed 002 would then drop the whole assistant message). Results are therefore
  chained one after another behind the message that made the calls.
- Tool names and arguments: Read/Edit/Write/Bash do what our filesystem-read/-edit/-create
  and terminal-execute do, so they are renamed (argument names too) and our passes treat
  them as ours; the original name stays in meta. Bash results become our terminal JSON when
  the line's `toolUseResult` has stdout/stderr. Other tools keep their names.

Ids: the first message made from a line takes the line's uuid, further ones `uuid:1`, ....
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, json_lines, leading_records
from agent.session.models import Message, ToolCall

TOOL_NAMES = {
    "Read": "filesystem-read",
    "Bash": "terminal-execute",
    "Edit": "filesystem-edit",
    "Write": "filesystem-create",
}
ARGUMENT_NAMES = {
    "Read": {"file_path": "filePath"},
    "Edit": {
        "file_path": "filePath",
        "old_string": "searchContent",
        "new_string": "replaceContent",
        "replace_all": "replaceAll",
    },
    "Write": {"file_path": "filePath"},
    "Bash": {},
}
TITLE_CHARS = 60
DETECT_LINES = 200
_TOOL_USE_ERROR = re.compile(r"^\s*<tool_use_error>(.*)</tool_use_error>\s*$", re.S)
_TAG = re.compile(r"<[^>]+>")


def detect(text: str) -> bool:
    """Typed JSON events, and a conversation line among the first ones (snapshots may lead)."""
    for record in leading_records(text, DETECT_LINES):
        if record is None or not isinstance(record.get("type"), str):
            return False
        if record["type"] in ("user", "assistant") and isinstance(record.get("message"), dict) and "uuid" in record:
            return True
    return False


def _ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def map_arguments(original: str, arguments: Any) -> Any:
    """Our argument names for the four mapped tools; other keys are kept as they are."""
    if original not in ARGUMENT_NAMES or not isinstance(arguments, dict):
        return arguments
    names = ARGUMENT_NAMES[original]
    out = {names.get(k, k): v for k, v in arguments.items()}
    if original == "Read":
        # Read's offset (first line, 1-based) and limit (line count) are our start/end lines.
        offset, limit = out.pop("offset", None), out.pop("limit", None)
        start = offset if isinstance(offset, int) and offset > 0 else None
        if start is not None:
            out["startLine"] = start
        if isinstance(limit, int) and limit > 0:
            out["endLine"] = (start or 1) + limit - 1
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append("[image]")
        return "\n".join(parts)
    return "" if content is None else str(content)


class _Builder:
    """The parse state: messages made so far and how lines map onto them."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.by_id: dict[str, Message] = {}
        self.line_last: dict[str, str | None] = {}  # line uuid -> last message made from it
        self.run_owner: dict[str, str] = {}  # assistant id or its result's id -> assistant id
        self.run_tail: dict[str, str] = {}  # assistant id -> last result chained behind it
        self.calls: dict[str, tuple[str, str, Any, str]] = {}  # call id -> (name, original, input, owner)
        self.last_time = 0
        self.sidechain: set[str] = set()
        self.changes = 0  # messages made or merged into: did a line add anything?

    def parent_of(self, parent_uuid: Any) -> str | None:
        if parent_uuid is None:
            return None
        if isinstance(parent_uuid, str) and parent_uuid in self.line_last:
            target = self.line_last[parent_uuid]
        else:  # a parent outside this file (resumed session) or out of order: keep the chain
            target = self.messages[-1].id if self.messages else None
        if target is not None and target in self.run_owner:
            owner = self.run_owner[target]
            return self.run_tail.get(owner, owner)
        return target

    def add(self, message: Message, sidechain: bool) -> Message:
        message.seq = len(self.messages) + 1
        self.changes += 1
        self.messages.append(message)
        self.by_id[message.id] = message
        if sidechain:
            self.sidechain.add(message.id)
        return message

    def time(self, record: dict) -> int:
        ms = _ms(record.get("timestamp"))
        if ms is not None:
            self.last_time = ms
        return self.last_time

    def assistant(self, record: dict, uuid: str, parent: str | None) -> str | None:
        message = record["message"]
        api_id = message.get("id")
        blocks = message.get("content")
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        elif not isinstance(blocks, list):  # a broken line: nothing to take from it
            blocks = []
        target = None
        if api_id and parent is not None and parent in self.run_owner:
            candidate = self.by_id[self.run_owner[parent]]
            if candidate.meta.get("claude_message_id") == api_id:
                target = candidate
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        originals: dict[str, str] = {}
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                texts.append(str(block["text"]))
            elif kind == "thinking" and block.get("thinking"):
                thinking.append(str(block["thinking"]))
            elif kind == "tool_use":
                original = str(block.get("name", ""))
                name = TOOL_NAMES.get(original, original)
                arguments = map_arguments(original, block.get("input", {}))
                call_id = str(block.get("id") or f"{uuid}:call{len(calls)}")
                calls.append(ToolCall(id=call_id, name=name, arguments=json.dumps(arguments, ensure_ascii=False)))
                if name != original:
                    originals[call_id] = original
                self.calls[call_id] = (name, original, block.get("input"), "")
        if target is None:
            if not (texts or thinking or calls):
                return parent
            meta: dict[str, Any] = {"source": "claude-code"}
            if api_id:
                meta["claude_message_id"] = api_id
            model = message.get("model")
            if isinstance(model, str) and model:
                meta["model"] = model
            target = self.add(
                Message(
                    id=uuid,
                    parent_id=parent,
                    role="assistant",
                    created_at=self.time(record),
                    status="error" if record.get("isApiErrorMessage") else "ok",
                    meta=meta,
                ),
                bool(record.get("isSidechain")),
            )
            self.run_owner[target.id] = target.id
        else:
            self.changes += 1
        if texts:
            target.content = "\n\n".join(([target.content] if target.content else []) + texts)
        if thinking:
            target.meta["thinking"] = "\n\n".join(
                ([target.meta["thinking"]] if "thinking" in target.meta else []) + thinking
            )
        target.tool_calls.extend(calls)
        if originals:
            target.meta.setdefault("original_tool_names", {}).update(originals)
        for call in calls:
            name, original, arguments, _ = self.calls[call.id]
            self.calls[call.id] = (name, original, arguments, target.id)
        # Results may already follow the message (merged late): the line ends its chain.
        return self.run_tail.get(target.id, target.id)

    def result(self, record: dict, block: dict, message_id: str, parent: str | None, single: bool) -> Message:
        call_id = str(block.get("tool_use_id", ""))
        name, original, arguments, owner = self.calls.get(call_id, (None, None, None, ""))
        if owner:  # chain behind the earlier results of the same assistant message
            parent = self.run_tail.get(owner, owner)
        is_error = bool(block.get("is_error"))
        content = _text_of(block.get("content"))
        extra = record.get("toolUseResult") if single else None
        meta: dict[str, Any] = {"source": "claude-code"}
        if original and name != original:
            meta["original_tool"] = original
        if original == "Bash" and isinstance(extra, dict) and ("stdout" in extra or "stderr" in extra):
            command = arguments.get("command", "") if isinstance(arguments, dict) else ""
            content = json.dumps(
                {
                    "command": command,
                    "stdout": str(extra.get("stdout") or ""),
                    "stderr": str(extra.get("stderr") or ""),
                    "exitCode": 1 if is_error else 0,
                },
                ensure_ascii=False,
            )
            if extra.get("interrupted"):
                meta["interrupted"] = True
        elif is_error:
            wrapped = _TOOL_USE_ERROR.match(content)
            content = wrapped.group(1).strip() if wrapped else content
            if not content.startswith("Error:"):
                content = f"Error: {content}"
        message = self.add(
            Message(
                id=message_id,
                parent_id=parent,
                role="tool",
                content=content,
                tool_call_id=call_id or None,
                tool_name=name,
                created_at=self.time(record),
                status="error" if is_error else "ok",
                meta=meta,
            ),
            bool(record.get("isSidechain")),
        )
        if owner:
            self.run_tail[owner] = message.id
            self.run_owner[message.id] = owner
        return message

    def user(self, record: dict, uuid: str, parent: str | None) -> str | None:
        content = record["message"].get("content")
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        text = content if isinstance(content, str) else _text_of(rest)
        made: list[str] = []
        for block in results:
            message_id = uuid if not made else f"{uuid}:{len(made)}"
            made.append(self.result(record, block, message_id, parent, len(results) == 1).id)
            parent = made[-1]
        if text.strip():
            meta: dict[str, Any] = {"source": "claude-code"}
            if record.get("isMeta"):
                meta["is_meta"] = True
            message_id = uuid if not made else f"{uuid}:{len(made)}"
            made.append(
                self.add(
                    Message(
                        id=message_id,
                        parent_id=parent,
                        role="user",
                        content=text,
                        created_at=self.time(record),
                        meta=meta,
                    ),
                    bool(record.get("isSidechain")),
                ).id
            )
        return made[-1] if made else parent


def _command_title(text: str) -> str:
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    if name:
        args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
        return f"{name.group(1)} {args.group(1) if args else ''}"
    return _TAG.sub(" ", text)


def _title(messages: list[Message], sidechain: set[str]) -> str:
    users = [m for m in messages if m.role == "user" and not m.meta.get("is_meta") and (m.content or "").strip()]
    main = [m for m in users if m.id not in sidechain]

    def plain(candidates: list[Message]) -> list[Message]:
        return [m for m in candidates if not (m.content or "").lstrip().startswith("<")]

    # The main conversation's own words first, then its slash commands, then a sub-agent's.
    ranked = plain(main) + main + plain(users) + users
    for message in ranked:
        title = " ".join(_command_title(message.content or "").split())
        if title:
            return title[:TITLE_CHARS]
    return ""


def parse(text: str) -> ImportedSession:
    builder = _Builder()
    cwd = model = summary = ""
    last_main: str | None = None
    last_any: str | None = None
    for _number, record in json_lines(text):
        kind = record.get("type")
        if kind == "summary" and isinstance(record.get("summary"), str) and not summary:
            summary = record["summary"]
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or uuid in builder.line_last:
            continue  # not a conversation line, or a line written twice
        parent = builder.parent_of(record.get("parentUuid"))
        message = record.get("message")
        if kind not in ("user", "assistant") or not isinstance(message, dict):
            builder.line_last[uuid] = parent  # skipped: lines below link through it
            continue
        cwd = cwd or str(record.get("cwd") or "")
        before = builder.changes
        if kind == "assistant":
            if not model and isinstance(message.get("model"), str) and not message["model"].startswith("<"):
                model = message["model"]
            made = builder.assistant(record, uuid, parent)
        else:
            made = builder.user(record, uuid, parent)
        builder.line_last[uuid] = made
        if builder.changes != before and made is not None:
            last_any = made
            if not record.get("isSidechain"):
                last_main = made
    if not builder.messages:
        raise ImportFormatError("no user or assistant messages in this Claude Code file")
    # The main conversation's last message; a file holding only a sub-agent's run uses that.
    head = last_main or last_any
    return ImportedSession(
        title=summary[:TITLE_CHARS] if summary else _title(builder.messages, builder.sidechain),
        cwd=cwd,
        model=model,
        head_id=head,
        messages=builder.messages,
    )
