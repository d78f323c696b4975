"""manageContext (seed 001 §3.3.5, SPEC §5): keep every request inside the budget.

Called by the loop before every model request, also between the tool calls of one turn:

1. build the request as usual and count it (system prompt, tools, messages: tiktoken);
2. compare with the budget (threshold percent or allowed tokens, agent/context/budget.py);
3. over it: first apply the replacements held for the prompt cache (agent/context/
   cache_policy.py), and if that is not enough and condensing is on → summarise the conversation since the last summary
   (agent/context/condense.py), store the summary, build again;
4. condensing off, failed, or not enough → smart truncation of the request copy toward the
   fallback target (history untouched);
5. return the build to send, with the history it came from.

A provider "context too long" error runs the same steps with a stricter limit (the
provider counted more than we did), and `/compact` runs step 3 alone, on demand.
Each condense and truncation is recorded as a `ContextEvent` (seed §9 metrics).

The loop's side (storing, events, the model call) is the injected `ContextHost`; this
module holds the policy only.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from agent.context.budget import Budget
from agent.context.condense import CondenseError, CondenseResult, split_at_last_summary
from agent.context.pipeline import BuildResult, TokenBreakdown, TruncateTo
from agent.session.models import ContextEvent, ContextTrigger, Message

if TYPE_CHECKING:
    from agent.settings.schema import ContextSettings

# An automatic condense needs the conversation since the last summary to hold at least this
# share of the threshold. Without it, a summary that alone is near the threshold (a huge
# pasted message kept verbatim, a tiny window) would be condensed again on every request,
# a model call each time, without shrinking anything: truncation handles it instead.
RECONDENSE_MIN_SHARE = 0.25
# After a "context too long" error the provider counts more than we do: the retry's messages
# aim at most at this share of the rejected ones (system prompt and tools cannot shrink).
OVERFLOW_SHRINK = 0.75


class ContextHost(Protocol):
    """What manage_context needs from the loop."""

    @property
    def session_id(self) -> str: ...

    async def build(self, history: list[Message], truncate: TruncateTo | None, flush: bool = False) -> BuildResult:
        """The next request; `flush`: apply the replacements held for the prompt cache too."""
        ...

    def truncate_to(self, max_tokens: int) -> TruncateTo:
        """Smart truncation toward `max_tokens` with the configured range and file folder."""
        ...

    def count(self, message: Message) -> int: ...

    def condense_started(self, trigger: ContextTrigger, tokens: int) -> None: ...

    async def condense(
        self, history: list[Message], trigger: ContextTrigger, instructions: str | None
    ) -> CondenseResult: ...

    async def commit(self, result: CondenseResult) -> list[Message]:
        """Store the summary (and its history file); returns the history now held."""
        ...

    async def record(self, event: ContextEvent, summary: Message | None) -> None: ...


class Managed(BaseModel):
    """The request to send and the history it was built from (with a new summary, if any)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    build: BuildResult
    history: list[Message]
    condensed: bool = False
    truncated: bool = False


def may_auto_condense(history: list[Message], budget: Budget, count) -> bool:
    """False while the conversation since the last summary is too small to be worth a summary."""
    previous, since = split_at_last_summary(history)
    if previous is None:
        return True
    # The prompt restated after the summary (condense.restated) is restated again by every
    # condense: summarising cannot shrink it, so it does not count as new conversation.
    return sum(count(m) for m in since if not m.meta.get("restated_from")) >= RECONDENSE_MIN_SHARE * budget.threshold


def truncation_target(cfg: ContextSettings, budget: Budget, limit: int | None = None) -> int:
    """The fallback target (seed default 50000), never above what the model accepts."""
    target = min(cfg.fallback_max_tokens, budget.allowed)
    return min(target, limit) if limit is not None else target


def _elapsed_ms(start: float) -> int:
    return int((time.perf_counter() - start) * 1000)


async def run_condense(
    history: list[Message],
    host: ContextHost,
    *,
    trigger: ContextTrigger,
    tokens: int,
    instructions: str | None = None,
) -> tuple[CondenseResult, list[Message]]:
    """Steps 3–4 of condensing with the bookkeeping: progress, the summary stored, the event.
    Raises CondenseError (after recording a failed event) when there is no summary."""
    host.condense_started(trigger, tokens)
    start = time.perf_counter()
    try:
        result = await host.condense(history, trigger, instructions)
    except CondenseError as exc:
        await host.record(
            ContextEvent(
                session_id=host.session_id,
                action="condense",
                trigger=trigger,
                outcome="failed",
                tokens_before=tokens,
                tokens_after=tokens,
                duration_ms=_elapsed_ms(start),
                error=str(exc),
                detail={"instructions": instructions} if instructions else {},
            ),
            None,
        )
        raise
    history = await host.commit(result)
    return result, history


async def manage_context(
    history: list[Message],
    host: ContextHost,
    *,
    budget: Budget,
    cfg: ContextSettings,
    rejected: TokenBreakdown | None = None,
) -> Managed:
    """The request for the next model call, within the budget (seed §3.3.5 steps 1–6).

    `rejected`: the provider refused a request of that size (by our count) as too long; the
    result then aims at `OVERFLOW_SHRINK` of its messages."""
    trigger: ContextTrigger = "auto" if rejected is None else "overflow"
    limit = (
        None
        if rejected is None
        else min(budget.threshold, rejected.total - int(rejected.messages * (1 - OVERFLOW_SHRINK)))
    )

    def fits(build: BuildResult) -> bool:
        total = build.tokens.total
        return not budget.should_condense(total) if limit is None else total <= limit

    build = await host.build(history, None)
    if fits(build):
        return Managed(build=build, history=history)
    if build.cache is not None and build.cache.held:
        # The budget needs the room: the replacements held for the prompt cache go first.
        build = await host.build(history, None, flush=True)
        if fits(build):
            return Managed(build=build, history=history)
    condensed = False
    if cfg.auto_condense and (trigger == "overflow" or may_auto_condense(history, budget, host.count)):
        tokens = build.tokens.total
        start = time.perf_counter()
        try:
            result, history = await run_condense(history, host, trigger=trigger, tokens=tokens)
        except CondenseError:
            pass  # recorded; fall back to truncation
        else:
            condensed = True
            build = await host.build(history, None, flush=True)
            still_over = not fits(build)
            await host.record(
                ContextEvent(
                    session_id=host.session_id,
                    action="condense",
                    trigger=trigger,
                    outcome="ok",
                    tokens_before=tokens,
                    tokens_after=build.tokens.total,
                    duration_ms=_elapsed_ms(start),
                    summary_id=result.summary.id,
                    detail=_condense_detail(result, still_over),
                ),
                result.summary,
            )
            if not still_over:
                return Managed(build=build, history=history, condensed=True)
    tokens = build.tokens.total
    start = time.perf_counter()
    truncated = await host.build(history, host.truncate_to(truncation_target(cfg, budget, limit)), flush=True)
    report = truncated.truncation
    await host.record(
        ContextEvent(
            session_id=host.session_id,
            action="truncate",
            trigger=trigger,
            outcome="ok" if report is None or report.reached else "partial",
            tokens_before=tokens,
            tokens_after=truncated.tokens.total,
            duration_ms=_elapsed_ms(start),
            detail=report.model_dump(
                include={
                    "target",
                    "messages_deleted",
                    "calls_removed",
                    "results_removed",
                    "results_folded",
                    "files_folded",
                    "orphans_repaired",
                }
            )
            if report
            else {},
        ),
        None,
    )
    return Managed(build=truncated, history=history, condensed=condensed, truncated=True)


async def compact(
    history: list[Message],
    host: ContextHost,
    *,
    instructions: str | None,
    tokens: int,
) -> tuple[CondenseResult, list[Message]]:
    """`/compact [instructions]`: condense now, whatever the budget says. Raises CondenseError."""
    start = time.perf_counter()
    result, history = await run_condense(history, host, trigger="manual", tokens=tokens, instructions=instructions)
    build = await host.build(history, None)
    await host.record(
        ContextEvent(
            session_id=host.session_id,
            action="condense",
            trigger="manual",
            outcome="ok",
            tokens_before=tokens,
            tokens_after=build.tokens.total,
            duration_ms=_elapsed_ms(start),
            summary_id=result.summary.id,
            detail=_condense_detail(result, False),
        ),
        result.summary,
    )
    return result, history


def _condense_detail(result: CondenseResult, still_over: bool) -> dict:
    condensed = result.summary.meta.get("condensed") or {}
    detail = {key: condensed.get(key) for key in ("model", "cost", "count", "instructions") if condensed.get(key)}
    detail["summary_tokens"] = result.tokens_after
    if still_over:
        detail["still_over"] = True
    return detail
