"""THE single API-build point (SPEC §4): stored history in, provider-ready request out.

Every request — a normal turn, a resumed session, headless mode — is built here. It is a
pure function of (history, now, settings, tools, system prompt): it never mutates
`history`, never does I/O, and gives the same output for the same input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import Any, Callable

from pydantic import BaseModel, Field

from agent.config import Settings
from agent.context import memo
from agent.context.facts import (API, CALLS, Facts, ensure_counted, facts_for, facts_of, holds, request_tokens,
                                 unchecked)
from agent.context.passes import active_path, externalize, file_reads, orphans, terminal_outdated
from agent.context.rendered import call_rows, copy_request
from agent.context.tokens import counter_for
from agent.context.truncation import MIDDLE_END, MIDDLE_START, TruncationReport, no_fold, truncate_until_fits
from agent.context.truncation.file_folder import Fold
from agent.session.models import Message

SMART_TRUNCATION = "smart_truncation"
REQUEST = "request"  # the memo entry of the final step: API forms and token total
CHUNK = 512  # messages checked before the part of the request they give is copied (see _rebuilt)


@dataclass(frozen=True)
class TruncateTo:
    """Ask the build to end with seed 001's smart truncation toward `max_tokens` (whole request).

    `fold` reads the files on disk (the caller injects it; the build itself does no I/O)."""

    max_tokens: int
    middle_start: float = MIDDLE_START
    middle_end: float = MIDDLE_END
    fold: Fold = no_fold


log = logging.getLogger("agent.context")

class PassReport(BaseModel):
    name: str
    changed: int
    tokens_before: int
    tokens_after: int


class TokenBreakdown(BaseModel):
    system: int = 0
    tools: int = 0
    messages: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages


class BuildResult(BaseModel):
    messages: list[dict[str, Any]]
    report: list[PassReport] = Field(default_factory=list)
    tokens: TokenBreakdown = Field(default_factory=TokenBreakdown)
    truncation: TruncationReport | None = None


def build_api_messages(
    history: list[Message],
    *,
    now_ms: int,
    settings: Settings,
    tools: list[dict[str, Any]] | None = None,
    system_prompt: str | None = None,
    truncate: TruncateTo | None = None,
) -> BuildResult:
    """Run the passes in SPEC order on a copy of the active path and count the result.

    The passes work on per-message records (agent/context/facts.py), and a step given the
    same records as last time reuses its result (agent/context/memo.py). With `truncate`
    (the budget step's fallback, agent/context/manage.py), smart truncation runs last, on
    what the other passes produced."""
    counter = counter_for(settings.context.tokenizer)
    encoding = counter.encoding_name
    passes = _passes(settings, now_ms)
    system_tokens = counter.count_messages([{"role": "system", "content": system_prompt}]) if system_prompt else 0
    tool_tokens = counter.count_tools(tools or [])
    api: list[dict[str, Any]] = []
    if system_prompt:
        api.append({"role": "system", "content": system_prompt})

    rebuilt = _rebuilt(history, passes, encoding, api) if truncate is None else None
    if rebuilt is not None:
        steps, tokens = rebuilt
        return _result(api, steps, tokens, system_tokens, tool_tokens, None)

    current = facts_for(history)

    def tokens_of(items: list[Facts]) -> int:
        ensure_counted(items, counter)
        return request_tokens(items)

    def delta(old: list[Facts], new: list[Facts]) -> int:
        """How many tokens a pass added (negative: saved)."""
        if len(old) != len(new) or not new:
            return tokens_of(new) - tokens_of(old)
        # A replacing pass keeps positions: only the replaced records change the sum.
        at = list(compress(range(len(new)), map(is_not, old, new)))
        return tokens_of([new[i] for i in at]) - tokens_of([old[i] for i in at])

    # Each pass's token change; the totals are filled in from the final count.
    steps: list[tuple[str, int, int]] = []
    for name, fn, params in passes:
        key = (encoding, params)
        remembered = memo.recall(name, current, key)
        if remembered is None:
            out, changed = fn(current, **params)
            step = (changed, delta(current, out) if changed else 0)
            remembered = memo.remember(name, current, key, out, step), step
        current, (changed, added) = remembered
        steps.append((name, changed, added))

    truncation: TruncationReport | None = None
    if truncate is not None:
        # Truncation works on messages and folds files on disk: never remembered.
        result = truncate_until_fits([f.message for f in current], count=counter.count_stored,
                                     max_tokens=truncate.max_tokens, middle_start=truncate.middle_start,
                                     middle_end=truncate.middle_end, fold=truncate.fold,
                                     fixed_tokens=system_tokens + tool_tokens)
        truncation = r = result.report
        changed = r.orphans_repaired + r.calls_removed + r.results_removed + r.results_folded + r.messages_deleted
        truncated = facts_of(result.messages)
        steps.append((SMART_TRUNCATION, changed, delta(current, truncated) if changed else 0))
        current = truncated

    request = memo.recall(REQUEST, current, encoding)
    if request is None:
        ensure_counted(current, counter)
        calls_at = list(compress(count(), map(CALLS, current)))
        extra = (request_tokens(current), calls_at, call_rows(calls_at, [current[i].calls for i in calls_at]))
        request = memo.remember(REQUEST, current, encoding, list(map(API, current)), extra), extra
    apis, (tokens, calls_at, rows) = request
    copy_request(apis, calls_at, rows, api)  # fresh dicts: callers (provider adapters) may edit theirs
    return _result(api, steps, tokens, system_tokens, tool_tokens, truncation)


def _passes(settings: Settings, now_ms: int) -> list[tuple[str, Callable, dict[str, Any]]]:
    """Passes 1-5 of SPEC §4 in order, each with its parameters."""
    cfg = settings.context
    return [
        (active_path.NAME, active_path.run, {}),
        (orphans.NAME, orphans.run, {}),
        (terminal_outdated.NAME, terminal_outdated.run,
         {"now_ms": now_ms, "keep_recent": cfg.terminal_keep_recent_results, "max_age_ms": cfg.terminal_max_age_ms,
          "placeholder": cfg.terminal_outdated_placeholder}),
        (file_reads.NAME, file_reads.run,
         {"workspace": str(settings.workspace), "keep_recent": cfg.file_keep_recent_reads,
          "placeholder": cfg.file_read_placeholder}),
        (externalize.NAME, externalize.run, {"limit": cfg.max_inline_chars, "preview": cfg.inline_preview_chars}),
    ]


def _rebuilt(history: list[Message], passes: list, encoding: str,
             api: list[dict[str, Any]]) -> tuple[list[tuple[str, int, int]], int] | None:
    """The warm build of the very history built last time, when every step is remembered:
    `(steps, tokens)`, with the request appended to `api`; else None and `api` untouched.

    The messages are compared with their records chunk by chunk, each chunk just before the
    part of the request that (roughly) comes from it is copied: the strings both touch are
    then still in the CPU cache (a 20,000-message build took a sixth less time). If any
    message changed, what was copied is dropped and the caller builds in full."""
    known = unchecked(history)
    if known is None:
        return None
    facts, snapshots = known
    steps: list[tuple[str, int, int]] = []
    current = facts
    for name, _, params in passes:
        remembered = memo.recall(name, current, (encoding, params))
        if remembered is None:
            return None
        current, (changed, added) = remembered
        steps.append((name, changed, added))
    request = memo.recall(REQUEST, current, encoding)
    if request is None:
        return None
    apis, (tokens, calls_at, rows) = request
    n, m, start = len(history), len(apis), len(api)
    for first in range(0, n, CHUNK):
        stop = min(first + CHUNK, n)
        if not holds(history, snapshots, first, stop):
            del api[start:]
            return None
        copy_request(apis, calls_at, rows, api, first * m // n, m if stop == n else stop * m // n)
    return steps, tokens


def _result(api: list[dict[str, Any]], steps: list[tuple[str, int, int]], tokens: int, system_tokens: int,
            tool_tokens: int, truncation: TruncationReport | None) -> BuildResult:
    report: list[PassReport] = []
    after = tokens
    for name, changed, added in reversed(steps):
        report.append(PassReport(name=name, changed=changed, tokens_before=after - added, tokens_after=after))
        after -= added
    report.reverse()
    for entry in report:
        if entry.changed:  # seed 000 §6.4, seed 003 §6: one line per pass that changed something
            log.info("%s: %d changed, %d → %d tokens", entry.name, entry.changed,
                     entry.tokens_before, entry.tokens_after)
    breakdown = TokenBreakdown(system=system_tokens, tools=tool_tokens, messages=tokens)
    # Built from validated parts: validating 5,000 plain dicts again cost more than a pass.
    return BuildResult.model_construct(messages=api, report=report, tokens=breakdown, truncation=truncation)
