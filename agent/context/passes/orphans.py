"""Pass 2: every tool call has its result right after it, and every result has its call.

Providers reject a request otherwise (Anthropic insists results directly follow their
call). Calls without a result are dropped from their assistant message (the message goes
too if nothing is left); results without a call are dropped; results that come later are
moved up behind their call; empty assistant messages (a stream interrupted before its
first token) are dropped. Storage is never touched: this shapes the request copy only.
"""

from __future__ import annotations

from agent.session.models import Message

NAME = "orphans"


def _already_valid(messages: list[Message]) -> bool:
    """The usual case, checked in one cheap scan: every call answered right after it, once."""
    seen: set[str] = set()
    n = len(messages)
    i = 0
    while i < n:
        message = messages[i]
        role = message.role
        if role == "tool":
            return False  # a result not directly behind its call
        if role == "assistant":
            calls = message.tool_calls
            if not calls:
                if not (message.content or "").strip():
                    return False
            else:
                if i + len(calls) >= n:
                    return False
                for offset, tc in enumerate(calls, start=1):
                    result = messages[i + offset]
                    if result.role != "tool" or result.tool_call_id != tc.id or tc.id in seen:
                        return False
                    seen.add(tc.id)
                i += len(calls)
        i += 1
    return True


def apply(messages: list[Message]) -> tuple[list[Message], int]:
    if _already_valid(messages):
        return list(messages), 0
    return repair(messages)


def repair(messages: list[Message]) -> tuple[list[Message], int]:
    """The general case: drop what has no partner, move late results up behind their call."""
    changed = 0
    # First occurrence of each result by call id, with its position.
    results: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.role == "tool" and message.tool_call_id and message.tool_call_id not in results:
            results[message.tool_call_id] = index
    used: set[int] = set()
    out: list[Message] = []
    for index, message in enumerate(messages):
        if message.role == "tool":
            if index not in used:
                changed += 1  # a result with no call before it, or a duplicate
            continue
        if message.role != "assistant":
            out.append(message)
            continue
        kept_calls = [
            tc for tc in message.tool_calls
            if results.get(tc.id, -1) > index and results[tc.id] not in used
        ]
        changed += len(message.tool_calls) - len(kept_calls)
        if not kept_calls and not (message.content or "").strip():
            if not message.tool_calls:
                changed += 1  # empty assistant message
            continue
        if len(kept_calls) != len(message.tool_calls):
            message = message.model_copy(update={"tool_calls": kept_calls})
        out.append(message)
        for offset, tc in enumerate(kept_calls, start=1):
            position = results[tc.id]
            used.add(position)
            if position != index + offset:
                changed += 1  # moved up behind its call
            out.append(messages[position])
    return out, changed
