"""Pass 3: old successful terminal outputs reach the model as a one-line placeholder.

Build logs and test runs from earlier in a session fill the context long after they stop
mattering, and the agent can always run a command again if it needs the output (seed
003). So a `terminal-execute` result is replaced by the placeholder when it is older than
the age limit, is not among the newest successful tool results, and did not fail. Errors
are always sent whole, so that the agent does not repeat its mistakes; they take none of
the "recent" slots either (SPEC §12.1, seed 003 example 5). A result without a timestamp
has no age and is never replaced (SPEC §12.2). Ordering is by timestamp, ties and missing
timestamps by position (SPEC §12.4). Storage is never touched: changed messages are new
copies in a new list, everything else is passed through as the same object.
"""

from __future__ import annotations

import json
from bisect import bisect_right, insort
from operator import is_
from typing import Any

from agent.context.facts import Facts, facts_of
from agent.context.passes.replace import replaced
from agent.context.state import PassMemory
from agent.session.models import Message

NAME = "terminal_outdated"

TERMINAL_TOOL = "terminal-execute"
# Defaults mirror agent.settings.schema.ContextSettings (terminal_keep_recent_results,
# terminal_max_age_ms, terminal_outdated_placeholder); the pipeline passes the settings.
KEEP_RECENT_RESULTS = 5
MAX_AGE_MS = 15 * 60 * 1000
OUTDATED_PLACEHOLDER = "此命令返回内容已过时"
# Seed 003 §3.3: how a terminal result is recognised when no tool name says so.
TERMINAL_FEATURES = ('"stdout":', '"stderr":', '"exitCode":')
ERROR_PREFIX = "Error:"


def _looks_like_terminal(content: str) -> bool:
    return any(feature in content for feature in TERMINAL_FEATURES)


def _is_terminal(f: Facts, calls: dict[str, tuple[str, str, str]]) -> bool:
    if f.tool_name:
        return f.tool_name == TERMINAL_TOOL
    call = calls.get(f.tool_call_id) if f.tool_call_id else None
    if call is not None:
        return call[1] == TERMINAL_TOOL
    return _looks_like_terminal(f.content or "")  # imported session: no name anywhere


def _stderr_of(content: str) -> Any:
    """The `stderr` of a terminal result's JSON (the answer is kept on the record, `_is_error`)."""
    if '"stderr"' not in content:
        return None
    try:
        parsed = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return parsed.get("stderr") if isinstance(parsed, dict) else None


def _is_error(f: Facts, terminal: bool) -> bool:
    # Each answer is remembered on the record: a warm build asks again for every result.
    error = f.error
    if error is None:
        error = f.error = (f.content or "").startswith(ERROR_PREFIX) or f.status == "error"
    if error:
        return True
    if terminal:
        stderr_error = f.stderr_error
        if stderr_error is None:
            stderr = _stderr_of(f.content or "")
            stderr_error = f.stderr_error = isinstance(stderr, str) and len(stderr) > 0
        return stderr_error
    return False


def apply(
    messages: list[Message],
    *,
    now_ms: int,
    keep_recent: int = KEEP_RECENT_RESULTS,
    max_age_ms: int = MAX_AGE_MS,
    placeholder: str = OUTDATED_PLACEHOLDER,
) -> tuple[list[Message], int]:
    out, changed = run(
        facts_of(messages),
        memory=PassMemory(),
        now_ms=now_ms,
        keep_recent=keep_recent,
        max_age_ms=max_age_ms,
        placeholder=placeholder,
    )
    return [f.message for f in out], changed


def run(
    facts: list[Facts],
    *,
    memory: PassMemory,
    now_ms: int,
    keep_recent: int = KEEP_RECENT_RESULTS,
    max_age_ms: int = MAX_AGE_MS,
    placeholder: str = OUTDATED_PLACEHOLDER,
) -> tuple[list[Facts], int]:
    """The pass on records (see `apply`); nothing replaced gives back the same list.

    The loop's next request is the last one's records plus a few, a little later: that is
    answered from the last run (see `_State`) in time for the new records only."""
    params = (max(keep_recent, 0), max_age_ms, placeholder)
    state = memory.last
    result = None
    if (
        state is not None
        and state.params == params
        and now_ms >= state.now
        and len(facts) >= len(state.source)
        and all(map(is_, state.source, facts))
    ):
        result = _extend(state, facts, now_ms)
    if result is None:
        result = _full(facts, now_ms, params)
    memory.last = result
    return result.output, result.changed


class _State:
    """A run of the pass, kept to extend it. `keys`: every candidate's (ordering time,
    position), ascending; `waiting`: those that could still be replaced (terminal, with a
    timestamp, not the placeholder already) but were not, too recent or among the newest;
    `calls`: the first call of each id; `unresolved`: ids of results no name classified.

    Appending records and moving the clock forward only ever replaces more: a candidate's
    rank among the newer ones and its age can only grow. So a longer list answers from
    the last run's output, looking at the new records and at `waiting` alone, unless a new
    call could classify an old result differently (an id in `unresolved`)."""

    __slots__ = ("source", "output", "changed", "params", "now", "keys", "waiting", "calls", "unresolved", "last_time")

    def __init__(self, source, output, changed, params, now, keys, waiting, calls, unresolved, last_time) -> None:
        self.source, self.output, self.changed, self.params, self.now = source, output, changed, params, now
        self.keys, self.waiting, self.calls, self.unresolved, self.last_time = (
            keys,
            waiting,
            calls,
            unresolved,
            last_time,
        )


def _eligible(f: Facts, terminal: bool, placeholder: str) -> bool:
    """Could be replaced once old and not among the newest: no timestamp, no age (SPEC §12.2)."""
    return terminal and bool(f.time) and not (f.length == len(placeholder) and f.content == placeholder)


def _unresolved(f: Facts, calls: dict[str, tuple[str, str, str]]) -> bool:
    return not f.tool_name and bool(f.tool_call_id) and f.tool_call_id not in calls


def _scan(
    facts: list[Facts],
    start: int,
    last_time: int,
    calls: dict[str, tuple[str, str, str]],
    unresolved: set[str] | frozenset[str],
) -> tuple[list[tuple[int, int]], dict, int] | None:
    """From `start`: every tool result as (ordering time, position), `calls` with the first
    call of each new id (a copy if any) and the last timestamp; None when a call has an id
    in `unresolved`."""
    results: list[tuple[int, int]] = []
    known = calls
    for index in range(start, len(facts)):
        f = facts[index]
        if f.time:
            last_time = f.time
        if f.role == "tool":
            results.append((last_time, index))
        elif f.calls:
            for call in f.calls:
                if call[0] in unresolved:
                    return None
                if calls is known:
                    calls = dict(calls)
                calls.setdefault(call[0], call)
    return results, calls, last_time


def _full(facts: list[Facts], now_ms: int, params: tuple[int, int, str]) -> _State:
    keep, max_age_ms, placeholder = params
    # One scan: the first call of every id (the call may come after its result in a raw
    # history) and every tool result with its ordering time. A result without a timestamp
    # takes the time of the nearest earlier message that has one, so it is ordered by its
    # position (SPEC §12.4).
    scanned = _scan(facts, 0, 0, {}, frozenset())
    assert scanned is not None  # nothing is unresolved: the scan cannot stop early
    results, calls, last_time = scanned

    # Only successful results compete for the recent slots: errors are always kept and
    # take none (SPEC §12.1).
    candidates: list[tuple[int, int, bool]] = []  # (ordering time, position, terminal)
    unresolved: set[str] = set()
    for order_time, index in results:
        f = facts[index]
        if _unresolved(f, calls):
            unresolved.add(f.tool_call_id)
        terminal = _is_terminal(f, calls)
        if not _is_error(f, terminal):
            candidates.append((order_time, index, terminal))

    # Newest first: by time, then by position (later = newer).
    candidates.sort(reverse=True)  # positions are unique: the third field never decides
    out: list[Facts] | None = None
    changed = 0
    waiting: list[tuple[int, int]] = []
    for rank, (order_time, index, terminal) in enumerate(candidates):
        f = facts[index]
        if not _eligible(f, terminal, placeholder):
            continue
        if rank < keep or now_ms - f.created_at <= max_age_ms:
            waiting.append((order_time, index))
            continue
        if out is None:
            out = list(facts)
        out[index] = replaced(f, placeholder)
        changed += 1
    keys = [(order_time, index) for order_time, index, _ in reversed(candidates)]
    return _State(
        facts, facts if out is None else out, changed, params, now_ms, keys, waiting, calls, unresolved, last_time
    )


def _extend(state: _State, facts: list[Facts], now_ms: int) -> _State | None:
    """`state`'s run for `facts`, which starts with its records; None when it must run in full."""
    keep, max_age_ms, placeholder = state.params
    start = len(state.source)
    unresolved = state.unresolved
    scanned = _scan(facts, start, state.last_time, state.calls, unresolved)
    if scanned is None:
        return None  # a new call names an earlier result that nothing named before
    results, calls, last_time = scanned
    keys, waiting = state.keys, list(state.waiting)
    for order_time, index in results:
        f = facts[index]
        if _unresolved(f, calls):
            if unresolved is state.unresolved:
                unresolved = set(unresolved)
            unresolved.add(f.tool_call_id)
        terminal = _is_terminal(f, calls)
        if not _is_error(f, terminal):
            if keys is state.keys:
                keys = list(keys)
            insort(keys, (order_time, index))
            if _eligible(f, terminal, placeholder):
                waiting.append((order_time, index))

    base = state.output
    if start < len(facts):
        base = facts if state.output is state.source else state.output + facts[start:]
    out: list[Facts] | None = None
    changed = state.changed
    still: list[tuple[int, int]] = []
    for key in waiting:
        f = facts[key[1]]
        if len(keys) - bisect_right(keys, key) < keep or now_ms - f.created_at <= max_age_ms:
            still.append(key)
            continue
        if out is None:
            out = list(base)
        out[key[1]] = replaced(f, placeholder)
        changed += 1
    return _State(
        facts, base if out is None else out, changed, state.params, now_ms, keys, still, calls, unresolved, last_time
    )
