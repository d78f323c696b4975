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

from agent.context.passes.replace import with_content
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


def _has_timestamp(message: Message) -> bool:
    return isinstance(message.created_at, int) and message.created_at > 0


def _looks_like_terminal(content: str) -> bool:
    return any(feature in content for feature in TERMINAL_FEATURES)


def _is_terminal(message: Message, call_names: dict[str, str]) -> bool:
    if message.tool_name:
        return message.tool_name == TERMINAL_TOOL
    name = call_names.get(message.tool_call_id) if message.tool_call_id else None
    if name is not None:
        return name == TERMINAL_TOOL
    return _looks_like_terminal(message.content or "")  # imported session: no name anywhere


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _stderr_of(content: str) -> Any:
    """Cached: every build re-checks every result, and parsing dominated warm builds."""
    if '"stderr"' not in content:
        return None
    try:
        parsed = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return parsed.get("stderr") if isinstance(parsed, dict) else None


def _is_error(message: Message, terminal: bool) -> bool:
    content = message.content or ""
    if content.startswith(ERROR_PREFIX) or message.status == "error":
        return True
    if terminal:
        stderr = _stderr_of(content)
        return isinstance(stderr, str) and len(stderr) > 0
    return False


def apply(
    messages: list[Message],
    *,
    now_ms: int,
    keep_recent: int = KEEP_RECENT_RESULTS,
    max_age_ms: int = MAX_AGE_MS,
    placeholder: str = OUTDATED_PLACEHOLDER,
) -> tuple[list[Message], int]:
    # One pass: the name of every assistant tool call (first one wins on a repeated id)
    # and the position of every tool result with its ordering time. A result without a
    # timestamp takes the time of the nearest earlier message that has one, so it is
    # ordered by its position (SPEC §12.4).
    call_names: dict[str, str] = {}
    results: list[tuple[int, int]] = []  # (ordering time, position)
    last_time = 0
    for index, message in enumerate(messages):
        created = message.created_at
        if isinstance(created, int) and created > 0:  # _has_timestamp, inlined: this loop is hot
            last_time = created
        role = message.role
        if role == "tool":
            results.append((last_time, index))
        elif role == "assistant" and message.tool_calls:
            for tc in message.tool_calls:
                call_names.setdefault(tc.id, tc.name)

    # Only successful results compete for the recent slots: errors are always kept and
    # take none (SPEC §12.1). The call may come after its result in a raw history, so
    # results are classified once every call name is known.
    candidates: list[tuple[int, int, bool]] = []  # (ordering time, position, terminal)
    for order_time, index in results:
        message = messages[index]
        terminal = _is_terminal(message, call_names)
        if not _is_error(message, terminal):
            candidates.append((order_time, index, terminal))

    # Newest first: by time, then by position (later = newer).
    candidates.sort(reverse=True)  # positions are unique: the third field never decides
    out = list(messages)
    changed = 0
    for _, index, terminal in candidates[max(keep_recent, 0):]:
        message = messages[index]
        if not terminal or not _has_timestamp(message):
            continue
        if now_ms - message.created_at <= max_age_ms or message.content == placeholder:
            continue
        out[index] = with_content(message, placeholder)
        changed += 1
    return out, changed
