"""Gemini CLI sessions (`~/.gemini/tmp/<project_hash>/chats/session-<time>-<id>.jsonl`, and the
whole-file `session-*.json` of releases before April 2026) as cairn sessions.

The format, from google-gemini/gemini-cli (packages/core/src/services/chatRecordingService.ts
and chatRecordingTypes.ts, packages/core/src/utils/sessionUtils.ts):
- JSONL, appended as the session goes: a first record `{sessionId, projectHash, startTime,
  lastUpdated, kind?, directories?}`; message records `{id, timestamp, type, content,
  displayContent?, …}` (the same `id` again replaces the message in place: tokens and tool
  calls are added to an answer after it was written); `{"$set": {...}}` metadata updates (a
  `messages` list in it replaces the whole history, e.g. after /compress); and
  `{"$rewindTo": id}`, which removes that message and every one after it. The legacy `.json`
  file is one object: the first record with its `messages` list.
- `type`: `user`, `gemini` (with `toolCalls`, `thoughts` [{subject, description}], `tokens`,
  `model`), or a UI notice `info` / `error` / `warning` (never sent to the model).
- `content` is a Gemini PartListUnion: a string, a part or a list of them; parts `{text,
  thought?}`, `{inlineData: {mimeType, data}}`, `{fileData}`, `{functionCall: {id, name, args}}`,
  `{functionResponse: {id, name, response: {output} | {error}}}`.
- A tool call record: `{id, name, args, result (parts, usually one functionResponse), status
  (success / error / cancelled …), timestamp, displayName, description, resultDisplay}`.

Imported: user and model messages in the order Gemini CLI would resume them (rewinds and
rewrites applied), each tool call paired with its result; `run_shell_command` is our
terminal-execute. Kept as notes (reported): UI notices, slash commands, injected context,
parts cairn has no place for. Reported, not imported: messages a rewind or rewrite removed,
the UI's rendering of calls (displayName, description, resultDisplay), broken lines (Gemini
CLI skips them too) and records of a kind cairn does not know.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, json_object, leading_records, parsed_lines
from agent.session.importers.common import Chain, timestamp_ms
from agent.session.models import Message

SHELL_TOOL = "run_shell_command"
NOTICE_TYPES = ("info", "error", "warning")
# What Gemini CLI itself leaves out of the model's history (sessionUtils.ts: isIgnoredUserContent).
COMMAND_PREFIXES = ("/", "?")
INJECTED_PREFIXES = ("<session_context>", "<hook_context>")
DISPLAY_FIELDS = ("displayName", "description", "resultDisplay", "renderOutputAsMarkdown")
CANCELLED = "cancelled"


def detect(text: str) -> bool:
    """The session record leads: the whole legacy file, or the first line of the JSONL."""
    head = json_object(text)
    if head is None:
        head = next(leading_records(text, 1), None)
    return (
        isinstance(head, dict) and isinstance(head.get("sessionId"), str) and isinstance(head.get("projectHash"), str)
    )


def _parts(content: Any) -> list[dict]:
    """A PartListUnion as a list of parts (a bare string is a text part)."""
    items = content if isinstance(content, list) else [] if content is None else [content]
    return [{"text": item} if isinstance(item, str) else item for item in items if isinstance(item, (str, dict))]


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _id_of(item: dict) -> str | None:
    return item["id"] if isinstance(item.get("id"), str) else None


def _plain(parts: list[dict]) -> str:
    return "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))


class _History:
    """The messages as Gemini CLI loads them: records applied in order, what they removed counted."""

    def __init__(self, chain: Chain) -> None:
        self.chain = chain
        self.header: dict[str, Any] = {}
        self.messages: dict[str, tuple[str, dict]] = {}  # id -> (where, record), in file order
        self.removed = Counter[str]()

    def add_all(self, where: str, items: Any) -> None:
        for number, item in enumerate(items if isinstance(items, list) else [], start=1):
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                self.messages[item["id"]] = (where, item)
            else:
                self.chain.skip(
                    f"{where}, message {number}", "message without an id", "not a Gemini CLI message record"
                )

    def apply(self, where: str, record: dict) -> None:
        """One record, with the precedence of Gemini CLI's own loader (loadConversationRecord)."""
        if isinstance(record.get("$rewindTo"), str):
            ids = list(self.messages)
            start = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for message_id in ids[start:]:
                del self.messages[message_id]
            self.removed["removed by a rewind"] += len(ids) - start
        elif isinstance(record.get("id"), str):
            self.messages[record["id"]] = (where, record)
        elif isinstance(record.get("$set"), dict):
            update = dict(record["$set"])
            if isinstance(update.get("messages"), list):
                kept = {m["id"] for m in update["messages"] if isinstance(m, dict) and isinstance(m.get("id"), str)}
                self.removed["replaced by a rewritten history"] += sum(i not in kept for i in self.messages)
                self.messages.clear()
                self.add_all(where, update.pop("messages"))
            self.header.update(update)
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            header = dict(record)
            self.add_all(where, header.pop("messages", None))
            self.header.update(header)
        else:
            self.chain.skip(where, "record of an unknown kind", "not a Gemini CLI session record cairn knows")


def _response(result: Any) -> tuple[str, bool, list[dict]]:
    """(text, is_error, parts kept aside) of a tool call's `result`."""
    if isinstance(result, str):
        return result, False, []
    texts: list[str] = []
    error = False
    aside: list[dict] = []
    for part in _parts(result):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict) and isinstance(body.get("error"), str):
                texts.append(body["error"])
                error = True
            elif isinstance(body, dict) and set(body) == {"output"}:
                output = body["output"]
                texts.append(output if isinstance(output, str) else json.dumps(output, ensure_ascii=False))
            else:
                texts.append(json.dumps(body, ensure_ascii=False))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            kind = next(iter(part), "part")
            mime = (part.get(kind) or {}).get("mimeType") if isinstance(part.get(kind), dict) else None
            texts.append(f"[{kind}: {mime}]" if mime else f"[{kind}]")
            aside.append(part)
    return "\n".join(texts), error, aside


class _Converter:
    def __init__(self, chain: Chain) -> None:
        self.chain = chain
        self.answered: set[str] = set()
        self.counts = Counter[str]()

    def notes_for(self, role: str, parts: list[dict], where: str, when: int) -> None:
        for part in parts:
            kind = next(iter(part), "part")
            self.chain.note(
                role,
                f"[{kind} part]\n{json.dumps(part, ensure_ascii=False)}",
                where=where,
                what=f"{kind} part",
                created_at=when,
                meta={"part": part},
            )

    def user(self, where: str, record: dict, when: int) -> None:
        chain = self.chain
        texts: list[str] = []
        images: list[dict] = []
        unknown: list[dict] = []
        responses = 0
        for part in _parts(record.get("content")):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("inlineData"), dict):
                texts.append("[image]")
                images.append(part)
            elif isinstance(part.get("functionResponse"), dict):
                self.response_part(part, when)
                responses += 1
            else:
                unknown.append(part)
        text = "".join(texts)
        meta: dict[str, Any] = {"images": images} if images else {}
        if record.get("displayContent") is not None and _plain(_parts(record["displayContent"])) != text:
            meta["display_content"] = record["displayContent"]
        stripped = text.strip()
        if stripped.startswith(INJECTED_PREFIXES):
            chain.note(
                "user", text, where=where, what="injected context (session or hook context)", created_at=when, meta=meta
            )
        elif stripped.startswith(COMMAND_PREFIXES):
            chain.note(
                "user",
                text,
                where=where,
                what="slash command (Gemini CLI does not send it to the model)",
                created_at=when,
                meta=meta,
            )
        elif stripped or images:
            chain.add("user", text, message_id=record.get("id"), created_at=when, meta=meta)
        elif not unknown and not responses:
            chain.skip(where, "empty user message", "nothing to import")
        self.notes_for("user", unknown, where, when)

    def response_part(self, part: dict, when: int) -> None:
        """A functionResponse in a user message (a rewritten history carries results this way)."""
        call_id = part["functionResponse"].get("id")
        if isinstance(call_id, str) and call_id in self.answered:
            self.counts["tool result repeated in a user message"] += 1
            return
        text, error, _ = _response([part])
        self.chain.result(call_id, text, is_error=error, named=part["functionResponse"].get("name"), created_at=when)
        if isinstance(call_id, str):
            self.answered.add(call_id)

    def gemini(self, where: str, record: dict, when: int) -> Message:
        chain = self.chain
        parts = _parts(record.get("content"))
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
        thinking = [p["text"] for p in parts if isinstance(p.get("text"), str) and p.get("thought")]
        if not thinking:  # older sessions keep the thought summaries beside the content
            thinking = [
                f"**{t.get('subject')}** {t.get('description', '')}"
                if t.get("subject")
                else str(t.get("description", ""))
                for t in _list(record.get("thoughts"))
                if isinstance(t, dict)
            ]
        records = [tc for tc in _list(record.get("toolCalls")) if isinstance(tc, dict)]
        by_id = {tc["id"]: tc for tc in records if isinstance(tc.get("id"), str)}
        calls = [
            {**p["functionCall"], **by_id.get(_id_of(p["functionCall"]), {})}
            for p in parts
            if isinstance(p.get("functionCall"), dict)
        ]
        seen = {_id_of(c) for c in calls}
        calls += [tc for tc in records if _id_of(tc) is None or _id_of(tc) not in seen]
        unknown = [
            p for p in parts if not isinstance(p.get("text"), str) and not isinstance(p.get("functionCall"), dict)
        ]
        meta: dict[str, Any] = {}
        if thinking:
            meta["thinking"] = "\n\n".join(thinking)
        for key in ("model", "tokens"):
            if record.get(key):
                meta[key] = record[key]
        # Before the answer: after it, a note would come between its calls and their results.
        self.notes_for("assistant", unknown, where, when)
        content = "".join(texts) if texts or not calls else None
        message = chain.add("assistant", content, message_id=record.get("id"), created_at=when, meta=meta)
        for call in calls:
            self.call(message, call)
        for call in calls:
            self.result(call, when)
        return message

    def call(self, message: Message, call: dict) -> None:
        original = str(call.get("name") or "tool")
        args = call.get("args")
        if not isinstance(args, dict):
            args = {}
        self.counts["tool call display fields"] += any(k in call for k in DISPLAY_FIELDS)
        if original == SHELL_TOOL and isinstance(args.get("command"), str):
            mapped = {"command": args["command"]}
            if isinstance(args.get("dir_path") or args.get("directory"), str):
                mapped["workingDirectory"] = args.get("dir_path") or args.get("directory")
            made = self.chain.call(message, call.get("id"), original, mapped, name="terminal-execute")
            message.meta.setdefault("original_arguments", {})[made.id] = args
        else:
            self.chain.call(message, call.get("id"), original, args)

    def result(self, call: dict, when: int) -> None:
        if "result" not in call or call["result"] is None:
            return  # report.py lists the call as one without a result
        text, error, aside = _response(call["result"])
        status = call.get("status")
        meta: dict[str, Any] = {"gemini_status": status} if isinstance(status, str) else {}
        if aside:
            meta["parts"] = aside
        call_id = str(call.get("id")) if call.get("id") else None
        self.chain.result(
            call_id,
            text,
            is_error=(error or status == "error") and status != CANCELLED,
            status="interrupted" if status == CANCELLED else None,
            created_at=timestamp_ms(call.get("timestamp")) or when,
            meta=meta,
        )
        if call_id:
            self.answered.add(call_id)


def _records(text: str, chain: Chain) -> list[tuple[str, dict]]:
    whole = json_object(text)
    if whole is not None:
        return [("file", whole)]
    out = []
    for number, record, _ in parsed_lines(text):
        if isinstance(record, dict):
            out.append((f"line {number}", record))
        else:
            chain.skip(
                f"line {number}",
                "a line that is not a JSON object",
                "Gemini CLI skips such lines too (e.g. one cut short by a crash)",
            )
    return out


def parse(text: str) -> ImportedSession:
    chain = Chain("gemini-cli")
    history = _History(chain)
    for where, record in _records(text, chain):
        history.apply(where, record)
    if not history.header:
        raise ImportFormatError("expected a Gemini CLI session: its first record has sessionId and projectHash")
    convert = _Converter(chain)
    model = ""
    for where, record in history.messages.values():
        when = timestamp_ms(record.get("timestamp"))
        kind = record.get("type")
        if kind == "user":
            convert.user(where, record, when)
        elif kind == "gemini":
            answer_model = convert.gemini(where, record, when).meta.get("model")
            model = answer_model if isinstance(answer_model, str) and answer_model else model
        elif kind in NOTICE_TYPES:
            content = _plain(_parts(record.get("content")))
            chain.note(
                "assistant",
                f"[{kind}] {content}",
                where=where,
                what=f"{kind} notice (Gemini CLI's UI; never sent to the model)",
                created_at=when,
            )
        else:
            chain.note(
                "assistant",
                f"[{kind}]\n{json.dumps(record, ensure_ascii=False)}",
                where=where,
                what=f"message of type {kind!r}",
                created_at=when,
                meta={"record": record},
            )
    reasons = {
        "removed by a rewind": "Gemini CLI removed them from the conversation ($rewindTo)",
        "replaced by a rewritten history": "Gemini CLI replaced them ($set of messages, e.g. /compress)",
        "tool call display fields": "the UI's rendering (displayName, description, resultDisplay); "
        "the result the model got is imported",
        "tool result repeated in a user message": "the same result is imported with its tool call",
    }
    for what, count in sorted((history.removed + convert.counts).items()):
        chain.skip("session", f"{count} × {what}", reasons[what])
    if history.header.get("memoryScratchpad"):
        chain.skip("session", "memoryScratchpad", "Gemini CLI's workflow notes for its memory, not the conversation")
    if not chain.messages:
        raise ImportFormatError("no user or model messages in this Gemini CLI session")
    summary = history.header.get("summary")
    return ImportedSession(
        title=chain.title(summary),
        model=model,
        created_at=timestamp_ms(history.header.get("startTime")) or None,
        updated_at=timestamp_ms(history.header.get("lastUpdated")) or None,
        head_id=chain.messages[-1].id,
        messages=chain.messages,
        skipped=chain.skipped,
    )
