"""SWE-agent trajectories (`*.traj`) as cairn sessions.

A JSON object: `history` (the chat the model saw: role, content, and on assistant messages
the `thought` and the `action` it ran; SWE-agent 1.x may add `tool_calls`, `tool` messages
with `tool_call_ids`, `message_type` and `is_demo`), `trajectory` (the same steps as
response/action/observation records) and `info` (exit status, submission, model stats).

The history is imported: an assistant message's `action` becomes a `bash` tool call (our
terminal-execute: SWE-agent runs its commands, special ones included, in a shell) and the
user message that follows it, the observation, becomes its result. An action left without
an observation (the final `submit`) stays in the assistant's text. Reported, not imported:
the system prompt, demonstrations (worked examples from the agent's config) and the
`trajectory` list (a copy of the history's steps). `info`'s exit status and submission
are kept as a closing note.
"""

from __future__ import annotations

import json

from agent.session.importers import ImportedSession, ImportFormatError, json_object
from agent.session.importers.common import Chain, add_item, content_text, load_document
from agent.session.models import Message


def detect(text: str) -> bool:
    data = json_object(text)
    return (
        data is not None
        and isinstance(data.get("history"), list)
        and ("trajectory" in data or "info" in data)
        and all(isinstance(m, dict) and "role" in m for m in data["history"])
    )


def parse(text: str) -> ImportedSession:
    data = load_document(text)
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise ImportFormatError("expected a SWE-agent trajectory: a JSON object with a 'history' list")
    chain = Chain("swe-agent")
    pending: tuple[Message, str, str] | None = None  # (assistant message, action, where)
    for number, item in enumerate(data["history"], start=1):
        where = f"history {number}"
        if not isinstance(item, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        role = item.get("role")
        if item.get("is_demo") or item.get("message_type") == "demonstration":
            chain.skip(where, "demonstration", "a worked example from the agent's configuration, not this run")
            continue
        if role in ("system", "developer"):
            chain.skip(where, f"{role} message", "cairn builds its own system prompt")
            continue
        if role == "user" and pending is not None:
            message, action, _ = pending
            call = chain.call(message, f"swe-{message.seq}", "bash", {"command": action})
            chain.result(call.id, content_text(item.get("content")) or "", created_at=message.created_at)
            pending = None
            continue
        if pending is not None:  # the action got no observation
            _no_observation(chain, pending)
            pending = None
        if role == "assistant":
            [message, *_] = add_item(chain, item, where)
            proposed = item.get("action")
            if not item.get("tool_calls") and isinstance(proposed, str) and proposed.strip():
                pending = (message, proposed.strip(), where)
            if isinstance(item.get("thought"), str) and item["thought"].strip() != (message.content or "").strip():
                message.meta["thought"] = item["thought"]
        elif role == "tool":
            ids = item.get("tool_call_ids") or [item.get("tool_call_id")]
            for call_id in ids if isinstance(ids, list) else [ids]:
                add_item(chain, {**item, "tool_call_id": call_id}, where)
        elif role == "user":
            add_item(chain, item, where)
        else:
            chain.note(
                "user",
                f"[{role} message]\n{content_text(item.get('content')) or ''}",
                where=where,
                what=f"message with role {role!r}",
                meta={"original": item},
            )
    if pending is not None:
        _no_observation(chain, pending)
    trajectory = data.get("trajectory")
    if isinstance(trajectory, list) and trajectory:
        chain.skip(
            "trajectory",
            f"{len(trajectory)} steps",
            "the same steps as the history (response, action, observation), which is imported",
        )
    info = data.get("info")
    if isinstance(info, dict) and (info.get("exit_status") or info.get("submission")):
        content = f"[exit: {info.get('exit_status') or 'unknown'}]\n{info.get('submission') or ''}".rstrip()
        chain.note(
            "assistant",
            content,
            where="info",
            what="exit status and submission",
            meta={"info": {k: v for k, v in info.items() if k in ("exit_status", "submission", "model_stats")}},
        )
    if not chain.messages:
        raise ImportFormatError("no user or assistant messages in this SWE-agent trajectory")
    return ImportedSession(
        title=chain.title(), head_id=chain.messages[-1].id, messages=chain.messages, skipped=chain.skipped
    )


def _no_observation(chain: Chain, pending: tuple[Message, str, str]) -> None:
    message, action, where = pending
    message.meta["action"] = action
    chain.skip(
        where,
        "action without an observation",
        f"kept in the assistant's text, not as a tool call (no result to pair it with): {json.dumps(action)[:80]}",
    )
