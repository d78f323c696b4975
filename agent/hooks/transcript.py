"""The session as a Claude Code transcript, for the `transcript_path` every hook is given.

Hooks written for Claude Code read `transcript_path`: a Stop hook that loops until the model
says a word reads the last assistant line, a logger copies it. Claude Code's transcript is a
JSONL file of typed lines, each linked to the one before through `uuid`/`parentUuid`
(agent/session/importers/claude_code.py reads the same format): `user` lines whose
`message.content` is the prompt's text or a list of `tool_result` blocks, and `assistant`
lines whose `message.content` is a list of `thinking`, `text` and `tool_use` blocks. Tool names
and inputs are Claude Code's (agent/hooks/claude_shape.py), as in every hook payload. The JSON
is compact, as Claude Code writes it, so a `grep '"role":"assistant"'` finds its lines.

The file lives in cairn's data folder (`<data dir>/transcripts/<session id>.jsonl`), never in
the repository. It is brought up to date right before a hook runs: the messages of the active
path not yet written are appended, so what a hook reads is current at no cost to a session
without hooks, and a message still streaming is never written half. Append-only, as Claude
Code's: a rewound branch stays in the file and the new one links to the message it grew from.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.hooks.claude_shape import claude_call
from agent.session.models import Message

FOLDER = "transcripts"
VERSION = "cairn"
MAX_SCAN_BYTES = 64 * 1024 * 1024  # an existing file read for the uuids it holds (a resumed session)


def transcripts_dir() -> Path:
    from agent.paths import data_dir

    return data_dir() / FOLDER


def _timestamp(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _assistant(message: Message, workspace: Path) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    thinking = message.meta.get("thinking")
    if isinstance(thinking, str) and thinking:
        blocks.append({"type": "thinking", "thinking": thinking})
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        name, arguments = claude_call(call.name, _arguments(call.arguments), workspace)
        blocks.append({"type": "tool_use", "id": call.id, "name": name, "input": arguments})
    if not blocks:
        return None
    found = message.meta.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "id": f"msg_{message.id}",
        "type": "message",
        "role": "assistant",
        "model": str(message.meta.get("model") or ""),
        "content": blocks,
        "stop_reason": "tool_use" if message.tool_calls else "end_turn",
        "usage": {
            "input_tokens": int(usage.get("prompt_tokens") or 0),
            "output_tokens": int(usage.get("completion_tokens") or 0),
        },
    }


def _tool_result(message: Message) -> tuple[dict[str, Any], Any]:
    content = message.content or ""
    block = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id or "",
        "content": content,
        "is_error": message.status == "error",
    }
    try:
        result: Any = json.loads(content) if content.startswith("{") else content
    except (ValueError, RecursionError):
        result = content
    return {"role": "user", "content": [block]}, result


def line(
    message: Message, parent: str | None, *, session_id: str, workspace: Path, sidechain: bool = False
) -> dict[str, Any] | None:
    """One message as Claude Code's transcript line (None: nothing Claude Code would write).
    `sidechain`: a subagent's conversation, as Claude Code marks it."""
    base: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": sidechain,
        "userType": "external",
        "cwd": str(workspace),
        "sessionId": session_id,
        "version": VERSION,
        "uuid": message.id,
        "timestamp": _timestamp(message.created_at),
    }
    if message.role == "assistant":
        body = _assistant(message, workspace)
        return None if body is None else {**base, "type": "assistant", "message": body}
    if message.role == "tool":
        body, result = _tool_result(message)
        return {**base, "type": "user", "message": body, "toolUseResult": result}
    if message.role == "user" or message.kind == "summary":
        out = {**base, "type": "user", "message": {"role": "user", "content": message.content or ""}}
        if message.kind == "summary":
            out["isCompactSummary"] = True
        return out
    return None  # a system message: Claude Code writes none


def _dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)


class Transcript:
    """The transcripts one agent's hooks are given: which message ids each file already holds
    (read once from a file a previous run left, for a resumed session)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder
        self._written: dict[str, set[str]] = {}

    def path(self, session_id: str) -> Path:
        folder = self._folder if self._folder is not None else transcripts_dir()
        return folder / f"{session_id}.jsonl"

    def _known(self, session_id: str) -> set[str]:
        known = self._written.get(session_id)
        if known is None:
            known = self._written[session_id] = _read_uuids(self.path(session_id))
        return known

    def sync(self, session_id: str, messages: Sequence[Message], workspace: Path, *, sidechain: bool = False) -> Path:
        """Append the messages of `messages` (the active path) not yet in the file; the path.
        A failure to write is no failure of the hook: the file is then just behind.
        `sidechain`: the session is a subagent's."""
        path = self.path(session_id)
        known = self._known(session_id)
        fresh: list[Message] = []
        parent: str | None = None
        for message in reversed(messages):  # the path grows at its end: stop at the first written
            if message.id in known:
                parent = message.id
                break
            fresh.append(message)
        lines = []
        for message in reversed(fresh):
            record = line(message, parent, session_id=session_id, workspace=workspace, sidechain=sidechain)
            known.add(message.id)
            if record is not None:
                lines.append(_dumps(record))
                parent = message.id
        with contextlib.suppress(OSError):
            _append(path, "".join(f"{text}\n" for text in lines))
        return path


def _read_uuids(path: Path) -> set[str]:
    found: set[str] = set()
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SCAN_BYTES)
    except OSError:
        return found
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("uuid"), str):
            found.add(record["uuid"])
    return found


def _append(path: Path, text: str) -> None:
    """Append (creating the file, private to the user, and its folder); never through a link."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        data = text.encode("utf-8", errors="replace")
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
