"""Loading a session for any reader (resume, display, export, `cairn context`): seed 002.

The active path is rebuilt from `head_id` through `parent_id`, then every assistant
message holding a tool call that has no result anywhere in that path is left out — the
whole message, text included (the seed's conservative rule: a message is atomic). A
crash or kill in the middle of a tool call therefore never yields a session the
provider rejects. Stored rows are not changed.
"""

from __future__ import annotations

import logging

from agent.session.models import Message

log = logging.getLogger("agent.session")


def tool_result_ids(messages: list[Message]) -> set[str]:
    return {m.tool_call_id for m in messages if m.role == "tool" and m.tool_call_id}


def tool_use_ids(messages: list[Message]) -> set[str]:
    return {tc.id for m in messages if m.role == "assistant" for tc in m.tool_calls}


def drop_unmatched_tool_calls(messages: list[Message]) -> list[Message]:
    """A new list without the assistant messages whose tool calls lack a result."""
    unmatched = tool_use_ids(messages) - tool_result_ids(messages)
    if not unmatched:
        return list(messages)
    log.debug(
        "[load_session_messages] Found %d unmatched tool call(s): %s", len(unmatched), ", ".join(sorted(unmatched))
    )
    kept: list[Message] = []
    for message in messages:
        if message.role == "assistant" and any(tc.id in unmatched for tc in message.tool_calls):
            log.debug("[load_session_messages] Leaving out assistant message %s with unmatched tool calls", message.id)
            continue
        kept.append(message)
    return kept


async def load_session_messages(store, session_id: str, head_id: str | None = None) -> list[Message]:
    """The session's active path as every reader should see it: up to `head_id` (None: the
    head the database has now)."""
    return drop_unmatched_tool_calls(await store.active_path(session_id, head_id=head_id))
