"""Pass 2: every tool call has its result right after it, and every result has its call.

Providers reject a request otherwise (Anthropic insists results directly follow their
call). Calls without a result are dropped from their assistant message (the message goes
too if nothing is left); results without a call are dropped; results that come later are
moved up behind their call; empty assistant messages (a stream interrupted before its
first token) are dropped. Storage is never touched: this shapes the request copy only.
"""

from __future__ import annotations

from operator import is_

from agent.context.facts import Facts, facts_of
from agent.context.state import PassMemory
from agent.session.models import Message

NAME = "orphans"


def _already_valid(facts: list[Facts], memory: PassMemory) -> bool:
    """The usual case, checked in one cheap scan: every call answered right after it, once.

    `memory.last`: the last list found valid and the call ids it answers. A list with the
    same records in front (the loop's next request: a few messages appended) is checked
    from where that one ended: a valid list leaves no call open, so the scan's state there
    is just those ids."""
    known, answered = memory.last or ([], frozenset())
    i = 0
    seen: set[str] = set()
    if known and len(facts) >= len(known) and all(map(is_, facts, known)):
        i = len(known)
        seen = set(answered)
    n = len(facts)
    while i < n:
        f = facts[i]
        role = f.role
        if role == "tool":
            return False  # a result not directly behind its call
        if role == "assistant":
            calls = f.calls
            if not calls:
                if f.blank:
                    return False
            else:
                if i + len(calls) >= n:
                    return False
                for offset, call in enumerate(calls, start=1):
                    call_id = call[0]
                    result = facts[i + offset]
                    if result.role != "tool" or result.tool_call_id != call_id or call_id in seen:
                        return False
                    seen.add(call_id)
                i += len(calls)
        i += 1
    if known is not facts:
        memory.last = (facts, frozenset(seen))
    return True


def run(facts: list[Facts], *, memory: PassMemory) -> tuple[list[Facts], int]:
    """The pass on records; a valid list comes back as the same list."""
    if _already_valid(facts, memory):
        return facts, 0
    return _repair(facts)


def apply(messages: list[Message]) -> tuple[list[Message], int]:
    facts = facts_of(messages)
    if _already_valid(facts, PassMemory()):
        return list(messages), 0
    out, changed = _repair(facts)
    return [f.message for f in out], changed


def repair(messages: list[Message]) -> tuple[list[Message], int]:
    """The general case: drop what has no partner, move late results up behind their call."""
    out, changed = _repair(facts_of(messages))
    return [f.message for f in out], changed


def _repair(facts: list[Facts]) -> tuple[list[Facts], int]:
    changed = 0
    # First occurrence of each result by call id, with its position.
    results: dict[str, int] = {}
    for index, f in enumerate(facts):
        if f.role == "tool" and f.tool_call_id and f.tool_call_id not in results:
            results[f.tool_call_id] = index
    used: set[int] = set()
    out: list[Facts] = []
    for index, f in enumerate(facts):
        if f.role == "tool":
            if index not in used:
                changed += 1  # a result with no call before it, or a duplicate
            continue
        if f.role != "assistant":
            out.append(f)
            continue
        calls = f.calls
        kept = [j for j, call in enumerate(calls) if results.get(call[0], -1) > index and results[call[0]] not in used]
        changed += len(calls) - len(kept)
        if not kept and f.blank:
            if not calls:
                changed += 1  # empty assistant message
            continue
        if len(kept) != len(calls):
            tool_calls = f.tool_calls
            f = f.copy(("tool_calls", tuple(kept)), "tool_calls", [tool_calls[j] for j in kept])
        out.append(f)
        for offset, j in enumerate(kept, start=1):
            position = results[calls[j][0]]
            used.add(position)
            if position != index + offset:
                changed += 1  # moved up behind its call
            out.append(facts[position])
    return out, changed
