"""THE single API-build point (SPEC §4): stored history in, provider-ready request out.

Every request — a normal turn, a resumed session, headless mode — is built here. It is a
pure function of (history, now, settings, tools, system prompt): it never mutates
`history`, never does I/O, and gives the same output for the same input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from agent.config import Settings
from agent.context.passes import active_path, externalize, file_reads, orphans, terminal_outdated
from agent.context.rendered import copy_api, valid_entry
from agent.context.tokens import REPLY_PRIMING, counter_for
from agent.context.truncation import MIDDLE_END, MIDDLE_START, TruncationReport, no_fold, truncate_until_fits
from agent.context.truncation.file_folder import Fold
from agent.session.models import Message

SMART_TRUNCATION = "smart_truncation"


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

    With `truncate` (the budget step's fallback, agent/context/manage.py), smart truncation
    runs last, on what the other passes produced."""
    counter = counter_for(settings.context.tokenizer)
    messages = list(history)
    report: list[PassReport] = []

    def count(items: list[Message]) -> int:
        # Counts are remembered per message object (agent/context/rendered.py): passes hand
        # unchanged messages through as the same objects, so a warm count encodes nothing.
        return sum(map(counter.count_stored, items)) + REPLY_PRIMING if items else 0

    def delta(old: list[Message], new: list[Message]) -> int:
        """How many tokens a pass added (negative: saved)."""
        if len(old) != len(new) or not new:
            return count(new) - count(old)
        # A replacing pass keeps positions: only the replaced objects change the sum.
        count_stored = counter.count_stored
        return sum(count_stored(b) - count_stored(a) for a, b in zip(old, new) if a is not b)

    # Each pass's token change; the totals are filled in from the final count, so a warm
    # build looks every message up once, in the loop that also copies it for the request.
    steps: list[tuple[str, int, int]] = []

    def run(name: str, fn, *args, **kwargs) -> None:
        nonlocal messages
        previous = messages
        messages, changed = fn(messages, *args, **kwargs)
        steps.append((name, changed, delta(previous, messages) if changed else 0))

    cfg = settings.context
    run(active_path.NAME, active_path.apply)
    run(orphans.NAME, orphans.apply)
    run(terminal_outdated.NAME, terminal_outdated.apply, now_ms=now_ms,
        keep_recent=cfg.terminal_keep_recent_results, max_age_ms=cfg.terminal_max_age_ms,
        placeholder=cfg.terminal_outdated_placeholder)
    run(file_reads.NAME, file_reads.apply, workspace=str(settings.workspace),
        keep_recent=cfg.file_keep_recent_reads, placeholder=cfg.file_read_placeholder)
    run(externalize.NAME, externalize.apply, limit=cfg.max_inline_chars, preview=cfg.inline_preview_chars)
    system_tokens = counter.count_messages([{"role": "system", "content": system_prompt}]) if system_prompt else 0
    tool_tokens = counter.count_tools(tools or [])
    truncation: TruncationReport | None = None
    if truncate is not None:
        def smart(items: list[Message]) -> tuple[list[Message], int]:
            nonlocal truncation
            result = truncate_until_fits(items, count=counter.count_stored, max_tokens=truncate.max_tokens,
                                    middle_start=truncate.middle_start, middle_end=truncate.middle_end,
                                    fold=truncate.fold, fixed_tokens=system_tokens + tool_tokens)
            truncation = r = result.report
            changed = r.orphans_repaired + r.calls_removed + r.results_removed + r.results_folded + r.messages_deleted
            return result.messages, changed

        run(SMART_TRUNCATION, smart)
    api: list[dict[str, Any]] = []
    if system_prompt:
        api.append({"role": "system", "content": system_prompt})
    tokens = _copy_and_count(messages, api, counter)
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


def _copy_and_count(messages: list[Message], out: list[dict[str, Any]], counter) -> int:
    """Append each message's request dict to `out`; return their tokens (with the reply priming)."""
    encoding, count_stored = counter.encoding_name, counter.count_stored
    append = out.append
    total = 0
    for message in messages:
        entry = valid_entry(message)
        if entry is None or entry.encoding != encoding:
            total += count_stored(message)  # renders and counts it, once
            entry = valid_entry(message)
        else:
            total += entry.tokens
        append(copy_api(entry.api))
    return total + REPLY_PRIMING if messages else 0
