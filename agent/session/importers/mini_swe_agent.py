"""mini-swe-agent trajectories (`*.traj.json`) as cairn sessions.

A JSON object `{"info": {exit_status, submission, model_stats, config, mini_version},
"messages": [...], "trajectory_format": "mini-swe-agent-1…"}`. Messages have the OpenAI
chat shape plus an `extra` field, and the run ends with a `role: "exit"` message whose
content is the submission (`extra.exit_status`, `extra.submission`).

- Text mode: an assistant message holds one ```bash (or ```mswea_bash_command) block, the
  command it ran (or `extra.actions[].command`); the user message after it, the observation
  (`<returncode>N</returncode><output>…`, or `extra.returncode`), is its result. The command
  becomes a `bash` tool call (our terminal-execute) and the observation its tool message,
  status error when the return code is not 0. A message without exactly one command (a
  format error the agent was told about) stays plain text.
- Tool-call mode: `tool_calls` and `tool` messages, read as OpenAI messages.
- The system prompt is skipped (reported); the final `exit` message, and any role cairn does
  not have, is kept as a `kind=note` message (reported).
"""

from __future__ import annotations

import re
from typing import Any

from agent.session.importers import ImportedSession, ImportFormatError, json_object
from agent.session.importers.common import Chain, add_item, content_text, load_document
from agent.session.models import Message

_COMMAND = re.compile(r"```(?:bash|mswea_bash_command)[ \t]*\n(.*?)\n?```", re.S)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")


def detect(text: str) -> bool:
    data = json_object(text)
    if data is None or not isinstance(data.get("messages"), list):
        return False
    info = data.get("info")
    if not isinstance(info, dict):
        info = {}
    return (
        str(data.get("trajectory_format", "")).startswith("mini-swe-agent")
        or "mini_version" in info
        or any(isinstance(m, dict) and m.get("role") == "exit" for m in data["messages"])
    )


def _command(item: dict) -> str | None:
    extra = item.get("extra")
    if not isinstance(extra, dict):
        extra = {}
    actions = extra.get("actions")
    if isinstance(actions, list) and len(actions) == 1 and isinstance(actions[0], dict):
        command = actions[0].get("command")
        return command if isinstance(command, str) and command.strip() else None
    found = _COMMAND.findall(content_text(item.get("content")) or "")
    return found[0] if len(found) == 1 else None


def _returncode(item: dict, content: str) -> int | None:
    extra = item.get("extra")
    if not isinstance(extra, dict):
        extra = {}
    code = extra.get("returncode")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    match = _RETURNCODE.search(content)
    return int(match.group(1)) if match else None


def parse(text: str) -> ImportedSession:
    data = load_document(text)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise ImportFormatError("expected a mini-swe-agent trajectory: a JSON object with a 'messages' list")
    chain = Chain("mini-swe-agent")
    pending: tuple[Message, str] | None = None
    for number, item in enumerate(data["messages"], start=1):
        where = f"message {number}"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        role = item.get("role")
        content = content_text(item.get("content")) or ""
        if role == "user" and pending is not None:
            code = _returncode(item, content)
            if code is not None:
                message, command = pending
                call = chain.call(message, f"mini-{message.seq}", "bash", {"command": command})
                chain.result(
                    call.id, content, is_error=code != 0, created_at=message.created_at, meta={"exitCode": code}
                )
                pending = None
                continue
        if pending is not None:
            _no_observation(chain, pending)
            pending = None
        if role in ("system", "developer"):
            chain.skip(where, f"{role} message", "cairn builds its own system prompt")
        elif role == "assistant":
            [message, *_] = add_item(chain, item, where)
            proposed = None if item.get("tool_calls") else _command(item)
            if proposed is not None:
                pending = (message, proposed)
        elif role == "tool":
            [message, *_] = add_item(chain, item, where)
            code = _returncode(item, content)
            if code not in (None, 0) and message.status == "ok":
                message.status = "error"
                message.content = content if content.startswith("Error:") else f"Error: {content}"
        elif role == "user":
            add_item(chain, item, where)
        else:
            extra = item.get("extra")
            if not isinstance(extra, dict):
                extra = {}
            label = f"[{role}: {extra['exit_status']}]" if role == "exit" and extra.get("exit_status") else f"[{role}]"
            chain.note(
                "assistant" if role == "exit" else "user",
                f"{label}\n{content}".rstrip(),
                where=where,
                what=f"{role!r} message",
                meta={"original_role": role, "extra": extra},
            )
    if pending is not None:
        _no_observation(chain, pending)
    if not chain.messages:
        raise ImportFormatError("no user or assistant messages in this mini-swe-agent trajectory")
    info = data.get("info")
    if not isinstance(info, dict):
        info = {}
    model = _model(info)
    return ImportedSession(
        title=chain.title(), model=model, head_id=chain.messages[-1].id, messages=chain.messages, skipped=chain.skipped
    )


def _model(info: dict) -> str:
    config = info.get("config")
    if not isinstance(config, dict):
        config = {}
    model: Any = config.get("model") if isinstance(config.get("model"), dict) else {}
    name = model.get("model_name")
    return name if isinstance(name, str) else ""


def _no_observation(chain: Chain, pending: tuple[Message, str]) -> None:
    message, command = pending
    message.meta["action"] = command
    chain.skip(
        f"message {message.seq}",
        "command without an observation",
        "kept in the assistant's text, not as a tool call (no result to pair it with)",
    )
