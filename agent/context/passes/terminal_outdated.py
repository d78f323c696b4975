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

import functools
import json
from typing import Any

from agent.context.facts import Facts, facts_of
from agent.context.passes.replace import replaced
from agent.session.models import Message

NAME = "terminal_outdated"

TERMINAL_TOOL = "terminal-execute"
# Defaults mirror agent.config.ContextSettings (terminal_keep_recent_results,
# terminal_max_age_ms, terminal_outdated_placeholder); the pipeline passes the settings.
KEEP_RECENT_RESULTS = 5
MAX_AGE_MS = 15 * 60 * 1000
OUTDATED_PLACEHOLDER = "此命令返回内容已过时"
# Seed 003 §3.3: how a terminal result is recognised when no tool name says so.
TERMINAL_FEATURES = ('"stdout":', '"stderr":', '"exitCode":')
ERROR_PREFIX = "Error:"
PARSE_CACHE_SIZE = 65_536


def _looks_like_terminal(content: str) -> bool:
    return any(feature in content for feature in TERMINAL_FEATURES)


def _is_terminal(f: Facts, calls: dict[str, tuple[str, str, str]]) -> bool:
    if f.tool_name:
        return f.tool_name == TERMINAL_TOOL
    call = calls.get(f.tool_call_id) if f.tool_call_id else None
    if call is not None:
        return call[1] == TERMINAL_TOOL
    return _looks_like_terminal(f.content or "")  # imported session: no name anywhere


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _stderr_of(content: str) -> Any:
    """Cached: the same output is checked again wherever it recurs (a reload, a copy)."""
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
    out, changed = run(facts_of(messages), now_ms=now_ms, keep_recent=keep_recent, max_age_ms=max_age_ms,
                       placeholder=placeholder)
    return [f.message for f in out], changed


def run(
    facts: list[Facts],
    *,
    now_ms: int,
    keep_recent: int = KEEP_RECENT_RESULTS,
    max_age_ms: int = MAX_AGE_MS,
    placeholder: str = OUTDATED_PLACEHOLDER,
) -> tuple[list[Facts], int]:
    """The pass on records (see `apply`); nothing replaced gives back the same list."""
    # One scan: the first call of every id (the call may come after its result in a raw
    # history) and every tool result with its ordering time. A result without a timestamp
    # takes the time of the nearest earlier message that has one, so it is ordered by its
    # position (SPEC §12.4).
    calls: dict[str, tuple[str, str, str]] = {}
    results: list[tuple[int, int]] = []  # (ordering time, position)
    last_time = 0
    for index, f in enumerate(facts):
        if f.time:
            last_time = f.time
        if f.role == "tool":
            results.append((last_time, index))
        elif f.calls:
            for call in f.calls:
                calls.setdefault(call[0], call)

    # Only successful results compete for the recent slots: errors are always kept and
    # take none (SPEC §12.1).
    candidates: list[tuple[int, int, bool]] = []  # (ordering time, position, terminal)
    for order_time, index in results:
        f = facts[index]
        terminal = _is_terminal(f, calls)
        if not _is_error(f, terminal):
            candidates.append((order_time, index, terminal))

    # Newest first: by time, then by position (later = newer).
    candidates.sort(reverse=True)  # positions are unique: the third field never decides
    out: list[Facts] | None = None
    changed = 0
    size = len(placeholder)
    for _, index, terminal in candidates[max(keep_recent, 0):]:
        f = facts[index]
        if not terminal or not f.time:  # no timestamp, no age (SPEC §12.2)
            continue
        if now_ms - f.created_at <= max_age_ms or (f.length == size and f.content == placeholder):
            continue
        if out is None:
            out = list(facts)
        out[index] = replaced(f, placeholder)
        changed += 1
    return (facts if out is None else out), changed
