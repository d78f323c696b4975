"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as cairn sessions.

One JSON record per line, `{"timestamp", "type", "payload"}` (codex-rs/protocol: RolloutItem):
`session_meta` (id, cwd, cli_version, …), `turn_context` (model, cwd, policies),
`response_item` (a Responses API item: the conversation), `event_msg` (UI events that
repeat the items) and `compacted`. Older rollouts have no wrapper: a first line with the
session's `id`/`timestamp`, then the response items themselves.

Response items: `message` (role user/assistant/developer/system, content parts
`input_text`/`output_text`/`input_image`), `reasoning` (summary texts → the next assistant
message's meta; encrypted content is reported), `function_call` (name, JSON `arguments`
string, `call_id`), `function_call_output` (`output`: a string, or `{content, success}`),
`custom_tool_call` / `custom_tool_call_output` (e.g. apply_patch, `input` string),
`local_shell_call` (`action.command` argv). Calls made in one response join the assistant
message before them. `shell` / `shell_command` / local shell calls are our
terminal-execute (`{"command": …}`; the original name stays in meta); their result becomes our
terminal JSON when Codex wrote `{output, metadata.exit_code}`.
Skipped and reported: system/developer messages, event_msg and turn_context records.
Kept as notes (reported): injected context (`<environment_context>`, `<user_instructions>`,
AGENTS.md), compaction summaries, web searches and any item type cairn does not know.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, json_lines, leading_records
from agent.session.importers.common import Chain, content_text, timestamp_ms
from agent.session.models import Message

WRAPPERS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
ITEMS = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
)
SHELL_TOOLS = ("shell", "shell_command", "container.exec", "local_shell")
INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")
DETECT_LINES = 20


def detect(text: str) -> bool:
    for record in leading_records(text, DETECT_LINES):
        if record is None:
            return False
        if record.get("type") in WRAPPERS and isinstance(record.get("payload"), dict):
            return True
        if record.get("type") in ITEMS and (
            "call_id" in record or "role" in record and "content" in record and isinstance(record["content"], list)
        ):
            return True  # an old rollout: items without the wrapper
    return False


def _command(name: str, arguments: Any) -> Any:
    """Our terminal-execute arguments for a Codex shell call (argv `bash -lc X` is X)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    command = arguments.get("command")
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        command = command[2] if len(command) == 3 and command[1] in ("-lc", "-c") else shlex.join(command)
    if not isinstance(command, str):
        return None
    out: dict[str, Any] = {"command": command}
    workdir = arguments.get("workdir") or arguments.get("working_directory")
    if isinstance(workdir, str) and workdir:
        out["cwd"] = workdir
    return out


def _output(output: Any) -> tuple[str, bool | None]:
    """(text, success) of a function_call_output's `output`."""
    if isinstance(output, dict):
        success = output.get("success")
        return _output(output.get("content"))[0], success if isinstance(success, bool) else None
    if isinstance(output, list):
        return content_text(output) or "", None
    return ("" if output is None else str(output)), None


class _Rollout:
    def __init__(self) -> None:
        self.chain = Chain("codex")
        self.thinking: list[str] = []
        self.open_assistant: Message | None = None  # the message this response's calls join
        self.commands: dict[str, str] = {}  # call id -> command, for terminal JSON results
        self.cwd = self.model = ""
        self.counts: Counter[str] = Counter()

    def assistant(self, when: int, content: str | None = None) -> Message:
        meta = {"thinking": "\n\n".join(self.thinking)} if self.thinking else {}
        self.thinking = []
        message = self.chain.add("assistant", content, created_at=when, meta=meta)
        self.open_assistant = message
        return message

    def call(self, where: str, when: int, call_id: Any, name: str, arguments: Any) -> None:
        message = self.open_assistant or self.assistant(when)
        if name in SHELL_TOOLS and (mapped := _command(name, arguments)) is not None:
            call = self.chain.call(message, call_id, "terminal-execute", mapped)
            message.meta.setdefault("original_tool_names", {})[call.id] = name
            self.chain.call_names[call.id] = ("terminal-execute", name)
            self.commands[call.id] = mapped["command"]
        else:
            self.chain.call(message, call_id, name, arguments)

    def result(self, when: int, call_id: Any, output: Any) -> None:
        text, success = _output(output)
        call_id = str(call_id) if call_id else None
        status_error = success is False
        meta: dict[str, Any] = {}
        if call_id in self.commands:
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if (
                isinstance(data, dict)
                and isinstance(data.get("output"), str)
                and isinstance((data.get("metadata") or {}).get("exit_code"), int)
            ):
                code = data["metadata"]["exit_code"]
                meta["codex_metadata"] = data["metadata"]
                text = json.dumps(
                    {"command": self.commands[call_id], "stdout": data["output"], "stderr": "", "exitCode": code},
                    ensure_ascii=False,
                )
                status_error = status_error or code != 0
                self.chain.result(call_id, text, created_at=when, status="error" if status_error else "ok", meta=meta)
                self.open_assistant = None
                return
        self.chain.result(call_id, text, is_error=status_error, created_at=when, meta=meta)
        self.open_assistant = None

    def item(self, where: str, when: int, item: dict) -> None:
        kind = item.get("type")
        chain = self.chain
        if kind == "message":
            role = item.get("role")
            text = content_text(item.get("content")) or ""
            if role in ("system", "developer"):
                self.counts[f"{role} message"] += 1
                return
            if role == "assistant":
                self.assistant(when, text)
                return
            self.open_assistant = None
            if role == "user" and text.lstrip().startswith(INJECTED):
                chain.note(
                    "user", text, where=where, what="injected context (environment, instructions)", created_at=when
                )
            elif role == "user":
                images = [
                    p for p in item.get("content") or [] if isinstance(p, dict) and p.get("type") == "input_image"
                ]
                message = chain.add("user", text, created_at=when)
                if images:
                    message.meta["images"] = images
            else:
                chain.note(
                    "user",
                    f"[{role} message]\n{text}",
                    where=where,
                    what=f"message with role {role!r}",
                    created_at=when,
                    meta={"item": item},
                )
        elif kind == "reasoning":
            summary = [str(s.get("text", "")) for s in item.get("summary") or [] if isinstance(s, dict)]
            content = [str(s.get("text", "")) for s in item.get("content") or [] if isinstance(s, dict)]
            self.thinking += [t for t in summary + content if t]
            if item.get("encrypted_content"):
                self.counts["encrypted reasoning"] += 1
        elif kind == "function_call":
            self.call(where, when, item.get("call_id"), str(item.get("name") or "tool"), item.get("arguments", ""))
        elif kind == "custom_tool_call":
            self.call(where, when, item.get("call_id"), str(item.get("name") or "tool"), {"input": item.get("input")})
        elif kind == "local_shell_call":
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            self.call(where, when, item.get("call_id") or item.get("id"), "local_shell", action)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.result(when, item.get("call_id"), item.get("output"))
        else:
            self.open_assistant = None
            chain.note(
                "assistant",
                f"[{kind}]\n{json.dumps(item, ensure_ascii=False)}",
                where=where,
                what=f"{kind} item",
                created_at=when,
                meta={"item": item},
            )


def parse(text: str) -> ImportedSession:
    rollout = _Rollout()
    chain = rollout.chain
    for number, record in json_lines(text):
        where = f"line {number}"
        when = timestamp_ms(record.get("timestamp"))
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else None
        if kind in WRAPPERS and payload is not None:
            if kind == "session_meta":
                meta = payload.get("meta") if isinstance(payload.get("meta"), dict) else payload
                rollout.cwd = rollout.cwd or str(meta.get("cwd") or "")
            elif kind == "turn_context":
                rollout.cwd = rollout.cwd or str(payload.get("cwd") or "")
                rollout.model = rollout.model or str(payload.get("model") or "")
                rollout.counts["turn_context record"] += 1
            elif kind == "event_msg":
                rollout.counts["event_msg record"] += 1
            elif kind == "compacted":
                rollout.open_assistant = None
                chain.note(
                    "user",
                    str(payload.get("message") or ""),
                    where=where,
                    what="compaction summary",
                    created_at=when,
                    meta={"compacted": payload},
                )
            else:
                rollout.item(where, when, payload)
        elif kind in ITEMS:
            rollout.item(where, when, record)
        elif record.get("record_type") == "state" or (number == 1 and "id" in record):
            continue  # old rollouts: session header and state lines, no conversation
        else:
            chain.skip(where, f"record of type {kind!r}", "not a Codex rollout record cairn knows")
    reasons = {
        "event_msg record": "UI events repeating the response items",
        "turn_context record": "per-turn settings (model, cwd, policies)",
        "system message": "cairn builds its own system prompt",
        "developer message": "cairn builds its own system prompt",
        "encrypted reasoning": "encrypted by the provider: not readable",
    }
    for what, count in sorted(rollout.counts.items()):
        chain.skip("rollout", f"{count} × {what}", reasons.get(what, "not part of the conversation"))
    if not chain.messages:
        raise ImportFormatError("no user or assistant messages in this Codex rollout")
    return ImportedSession(
        title=chain.title(),
        cwd=rollout.cwd,
        model=rollout.model,
        head_id=chain.messages[-1].id,
        messages=chain.messages,
        skipped=chain.skipped,
    )
