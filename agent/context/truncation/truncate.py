"""Smart truncation: the fallback when condensing is off or fails (seed 001 §3.2, SPEC §5).

`smart_truncate` follows the seed's call chain (§3.2.4, §5.1):

    calculateMiddleRange → filterToolCallsInMiddle → foldAllFileReads
    → calculateTotalTokens (≤ maxTokens: done) → deleteMiddleMessages

It shapes the request copy only: the input list and its messages are never changed (changed
messages are copies), storage keeps everything, and the same input gives the same output.
The output is always a valid request: the input is first put in order by the orphan pass
(every call answered right after it), and every step then keeps or drops a call together
with its results. The first user message, the last user message and the last exchange are
never touched (middle_range.py), so the target is reached only when the middle holds
enough; `report.reached` says whether it did.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from agent.context.passes import orphans
from agent.context.truncation.file_folder import Fold, FoldStats, fold_file_reads, no_fold
from agent.context.truncation.message_deleter import DeleteStats, delete_middle
from agent.context.truncation.middle_range import (
    MIDDLE_END,
    MIDDLE_START,
    Unit,
    flatten,
    group_units,
    mark_middle,
    middle_range,
)
from agent.context.truncation.tool_filter import FilterStats, filter_tool_calls
from agent.session.models import Message

# "maxTokens: number // 回退阈值（默认50000）"
FALLBACK_MAX_TOKENS = 50_000

Count = Callable[[Message], int]


class TruncationReport(BaseModel):
    """What each step did, for the log, the metrics (seed §9) and the UI marker."""

    tokens_before: int
    tokens_after: int
    target: int
    middle: tuple[int, int] | None = None  # inclusive message indexes after the orphan repair
    orphans_repaired: int = 0
    calls_removed: int = 0
    results_removed: int = 0
    results_folded: int = 0
    files_folded: list[str] = []
    messages_deleted: int = 0
    batches: int = 0
    middle_messages_left: int = 0  # what step 5 could still delete; 0 when the target was out of reach
    reached: bool = True


class TruncationResult(BaseModel):
    messages: list[Message]
    report: TruncationReport


def default_count() -> Count:
    from agent.context.tokens import counter_for

    return counter_for("o200k_base").count_stored


def smart_truncate(
    messages: list[Message],
    *,
    count: Count | None = None,
    max_tokens: int = FALLBACK_MAX_TOKENS,
    middle_start: float = MIDDLE_START,
    middle_end: float = MIDDLE_END,
    fold: Fold = no_fold,
    fixed_tokens: int = 0,
) -> TruncationResult:
    """`messages` shrunk toward `max_tokens` (counted with `fixed_tokens` — system prompt and
    tool definitions — on top, so the caller can aim the whole request at the target)."""
    count = count or default_count()
    valid, repaired = orphans.apply(messages)
    tokens = [count(m) for m in valid]
    before = sum(tokens) + fixed_tokens

    def unit_tokens(units: list[Unit]) -> list[int]:
        return [sum(count(m) for m in unit.messages) for unit in units]

    # Step 1: the middle range by cumulative tokens.
    units = mark_middle(group_units(valid), tokens, middle_start, middle_end)
    # Step 2: drop tool calls in the middle, except file views.
    filtered = FilterStats()
    units = filter_tool_calls(units, filtered)
    # Step 3: fold every file view ("折叠所有文件查看结果"), not only the middle ones.
    folded = FoldStats()
    units = fold_file_reads(units, fold, folded)
    # Step 4: fits now?
    sizes = unit_tokens(units)
    total = sum(sizes) + fixed_tokens
    # Step 5: delete middle messages from the centre outwards until it fits.
    deleted = DeleteStats()
    if total > max_tokens:
        units, total = delete_middle(units, sizes, total, max_tokens, deleted)

    report = TruncationReport(
        tokens_before=before,
        tokens_after=total,
        target=max_tokens,
        middle=middle_range(tokens, middle_start, middle_end),
        orphans_repaired=repaired,
        calls_removed=filtered.calls_removed,
        results_removed=filtered.results_removed,
        results_folded=folded.results_folded,
        files_folded=folded.files,
        messages_deleted=deleted.messages_deleted,
        batches=deleted.batches,
        middle_messages_left=sum(len(unit.messages) for unit in units if unit.middle),
        reached=total <= max_tokens,
    )
    return TruncationResult.model_construct(messages=flatten(units), report=report)


# Rounds of truncate_until_fits; each round works on a smaller list, so few are ever needed.
MAX_ROUNDS = 8


def truncate_until_fits(messages: list[Message], *, max_rounds: int = MAX_ROUNDS, **options) -> TruncationResult:
    """`smart_truncate` again on its own output while the target is not reached.

    One round touches only the middle 1/6–5/6 of the tokens, so when the ends alone are over
    the target (a long tool loop inside one turn) the request would still be too big for the
    model. Each further round takes the middle of what is left; the first user message and
    the last exchange are never touched, so the rounds stop when nothing more can go.
    """
    result = smart_truncate(messages, **options)
    report = result.report
    rounds = 1
    while not report.reached and rounds < max_rounds:
        again = smart_truncate(result.messages, **options)
        if again.report.tokens_after >= report.tokens_after:
            break  # nothing left to take
        r = again.report
        report = report.model_copy(
            update={
                "tokens_after": r.tokens_after,
                "reached": r.reached,
                "middle_messages_left": r.middle_messages_left,
                "orphans_repaired": report.orphans_repaired + r.orphans_repaired,
                "calls_removed": report.calls_removed + r.calls_removed,
                "results_removed": report.results_removed + r.results_removed,
                "results_folded": report.results_folded + r.results_folded,
                "files_folded": list(dict.fromkeys(report.files_folded + r.files_folded)),
                "messages_deleted": report.messages_deleted + r.messages_deleted,
                "batches": report.batches + r.batches,
            }
        )
        result = again
        rounds += 1
    return TruncationResult.model_construct(messages=result.messages, report=report)
