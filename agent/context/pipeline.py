"""THE single API-build point (SPEC §4): stored history in, provider-ready request out.

Every request — a normal turn, a resumed session, headless mode — is built here, through
the session's request builder (agent/context/builder.py). It is a pure function of
(history, now, settings, tools, system prompt, cache policy) — what earlier requests sent is
part of the history (their request records): it never mutates `history`, never does I/O,
and gives the same output for the same input.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress, count
from operator import is_not, or_
from typing import Any

from pydantic import BaseModel, Field

from agent.context.cache_policy import EXACT, CacheDecision, CachePolicy, decide
from agent.context.facts import API, CALLS, TOKENS, Facts, ensure_counted, holds, request_tokens
from agent.context.image_window import Cut, image_cut, sent
from agent.context.memo import Memo
from agent.context.passes import active_path, externalize, file_reads, orphans, stale_file_results, terminal_outdated
from agent.context.rendered import (
    CallRow,
    SessionImages,
    ToolImages,
    attach_images,
    call_rows,
    copy_parts,
    copy_request,
    group_start,
    tool_images,
    with_tool_images,
)
from agent.context.state import BuildState
from agent.context.tokens import REPLY_PRIMING, TokenCounter, counter_for
from agent.context.truncation import MIDDLE_END, MIDDLE_START, TruncationReport, no_fold, truncate_until_fits
from agent.context.truncation.file_folder import Fold
from agent.session.models import Message
from agent.settings.schema import Settings

SMART_TRUNCATION = "smart_truncation"
REQUEST = "request"  # the memo entry of the final step: API forms and token total
IMAGE_WINDOW = "image_window"  # the memo entry of where the images a request carries start
HELD = "held"  # the memo entry of the replacements held for the prompt cache
# The passes that replace already-sent results (seeds 003, 000, and the savings rules that
# run under `auto` only): what the cache policy holds.
REPLACING = (terminal_outdated.NAME, file_reads.NAME, stale_file_results.NAME)
CHUNK = 512  # messages checked before the part of the request they give is copied (see _copy_checked)


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
    cache: CacheDecision | None = None


def build_api_messages(
    history: list[Message],
    *,
    now_ms: int,
    settings: Settings,
    tools: list[dict[str, Any]] | None = None,
    system_prompt: str | None = None,
    truncate: TruncateTo | None = None,
    policy: CachePolicy = EXACT,
    flush: bool = False,
    state: BuildState | None = None,
    counter: TokenCounter | None = None,
    images: SessionImages | None = None,
) -> BuildResult:
    """Run the passes in SPEC order on a copy of the active path and count the result.

    `policy` says when the seed 000/003 replacements of already-sent messages are applied
    (agent/context/cache_policy.py; `flush`: now, the budget needs the room); what earlier
    requests applied is read from `history` itself. `state` and `counter` (the session's
    request builder's, agent/context/builder.py) carry what earlier builds computed: per-
    message records (agent/context/facts.py) and each step's last result (memo.py); without
    them the build starts from nothing and gives the same result. With `truncate` (the
    budget step's fallback, agent/context/manage.py), smart truncation runs last, on what
    the other passes produced. `images`: the bytes of the images user messages and tool
    results attach, for a model that sees images (None: each image is its `[image: name, WxH]`
    line); a group of tool results is followed by a user message carrying theirs."""
    state = state if state is not None else BuildState()
    counter = counter if counter is not None else counter_for(settings.context.tokenizer)
    system_tokens = counter.count_messages([{"role": "system", "content": system_prompt}]) if system_prompt else 0
    tool_tokens = counter.count_tools(tools or [])
    log = state.sent.log(history)
    # The loop's next request is the last one's history plus a few messages: the passes run
    # on the last records for those taken as unchanged, which is checked while the request
    # is copied (see _copy_checked). Truncation reads the messages themselves: check first.
    known = state.records.unchecked_records(history) if truncate is None else None
    args = (
        now_ms,
        settings,
        truncate,
        counter,
        system_prompt,
        system_tokens + tool_tokens,
        state,
        policy,
        log,
        flush,
        images,
    )
    built = _build(history, known, *args)
    if built is None:  # a message was edited in place: build again, every message checked
        built = _build(history, None, *args)
    api, steps, tokens, truncation, decision = built
    result = _result(api, steps, tokens, system_tokens, tool_tokens, truncation)
    result.cache = decision
    return result


def _build(
    history: list[Message],
    known: tuple[list[Facts], list[tuple], int] | None,
    now_ms: int,
    settings: Settings,
    truncate: TruncateTo | None,
    counter,
    system_prompt: str | None,
    fixed_tokens: int,
    state: BuildState,
    policy: CachePolicy,
    log,
    flush: bool,
    images: SessionImages | None,
):
    """`(request, steps, tokens, truncation, cache decision)`; None when `known` records turned out stale."""
    encoding = counter.encoding_name
    memo = state.memo
    current, snapshots, unchecked = known if known is not None else (state.records.facts_for(history), [], 0)

    # Each pass's token change; the totals are filled in from the final count.
    steps: list[tuple[str, int, int]] = []
    outputs: dict[str, list[Facts]] = {}
    decision: CacheDecision | None = None
    for name, fn, params in _passes(settings, now_ms, policy):
        if name == externalize.NAME:  # the replacing passes are done: hold what the cache policy holds
            current, decision = _hold(outputs, current, steps, log, policy, now_ms, flush, counter, memo)
        key = (encoding, params)
        remembered = memo.recall(name, current, key)
        if remembered is None:
            out, changed = fn(current, memory=state.memory(name), **params)
            step = (changed, _delta(current, out, counter, memo.latest(name)) if changed else 0)
            remembered = memo.remember(name, current, key, out, step), step
        outputs[name] = current
        current, (changed, added) = remembered
        steps.append((name, changed, added))

    truncation: TruncationReport | None = None
    if truncate is not None:
        # Truncation works on messages and folds files on disk: never remembered.
        result = truncate_until_fits(
            [f.message for f in current],
            count=counter.count_stored,
            max_tokens=truncate.max_tokens,
            middle_start=truncate.middle_start,
            middle_end=truncate.middle_end,
            fold=truncate.fold,
            fixed_tokens=fixed_tokens,
        )
        truncation = r = result.report
        changed = r.orphans_repaired + r.calls_removed + r.results_removed + r.results_folded + r.messages_deleted
        truncated = state.records.facts_of(result.messages)
        steps.append((SMART_TRUNCATION, changed, _delta(current, truncated, counter) if changed else 0))
        current = truncated

    cut = _image_cut(current, images, memo)
    request_key = (encoding, images.version if images is not None else None, cut)
    apis, (tokens, calls_at, rows, parts_at, inserts) = memo.recall(REQUEST, current, request_key) or _request(
        current, counter, memo, request_key, images, cut
    )
    api: list[dict[str, Any]] = []
    if system_prompt:
        api.append({"role": "system", "content": system_prompt})
    if not _copy_checked(history, snapshots, unchecked, apis, calls_at, rows, api):
        return None
    copy_parts(api, parts_at, 1 if system_prompt else 0)
    api = with_tool_images(api, inserts, 1 if system_prompt else 0)  # last: the positions above are the records'
    return api, steps, tokens, truncation, decision


def _hold(
    outputs: dict[str, list[Facts]],
    current: list[Facts],
    steps: list[tuple[str, int, int]],
    log,
    policy: CachePolicy,
    now_ms: int,
    flush: bool,
    counter,
    memo: Memo,
) -> tuple[list[Facts], CacheDecision]:
    """`current` (the replacing passes' output) with the replacements the policy holds put
    back as they were, and the decision; the replacing passes' steps count only what was applied.

    The list with the same held positions as last time is the very same list, so the
    steps after it find their remembered results."""
    # Each replacing pass's input, and the last one's output (a rule that did not run: none).
    stages = [outputs[name] for name in REPLACING if name in outputs] + [current]
    before = stages[0]
    if policy.mode == "auto":  # what is held, and whether applying pays, is weighed in tokens
        for stage in stages:
            ensure_counted(stage, counter)
    held, decision = decide(before, current, log, policy, now_ms=now_ms, flush=flush)
    if not held:
        return current, decision
    key = tuple(held)
    remembered = memo.recall(HELD, current, key)
    if remembered is None:
        out = list(current)
        for index in held:
            out[index] = before[index]
        remembered = memo.remember(HELD, current, key, out), None
    out = remembered[0]
    # Take each held replacement out of the step of the pass that made it.
    ran = [name for name in REPLACING if name in outputs]
    for position, (name, changed, added) in enumerate(steps):
        if name not in ran:
            continue
        k = ran.index(name)
        base, made = stages[k], stages[k + 1]
        mine = [i for i in held if made[i] is not base[i]]
        if mine:
            steps[position] = (name, changed - len(mine), added - sum(made[i].tokens - base[i].tokens for i in mine))
    return out, decision


def _copy_checked(
    history: list[Message],
    snapshots: list[tuple],
    unchecked: int,
    apis: list[dict[str, Any]],
    calls_at: list[int],
    rows: list,
    api: list[dict[str, Any]],
) -> bool:
    """Append fresh copies of `apis` to `api` (callers, provider adapters, may edit theirs)
    while checking that the first `unchecked` messages still have the fields of `snapshots`;
    False if one does not.

    The check goes chunk by chunk, each chunk just before the part of the request that
    (roughly) comes from it is copied: the strings both touch are then still in the CPU
    cache (a 20,000-message build took a sixth less time than checking all first)."""
    n, m = len(history), len(apis)
    done = 0
    for first in range(0, unchecked, CHUNK):
        stop = min(first + CHUNK, unchecked)
        if not holds(history, snapshots, first, stop):
            return False
        upto = m if stop == n else stop * m // n
        copy_request(apis, calls_at, rows, api, done, upto)
        done = upto
    copy_request(apis, calls_at, rows, api, done, m)
    return True


def _delta(old: list[Facts], new: list[Facts], counter, prior: tuple | None = None) -> int:
    """How many tokens a pass added (negative: saved) turning `old` into `new`.

    A replacing pass keeps positions: only the replaced records change the sum. With
    `prior` (`memo.latest`: the pass's last run), the positions before its end are looked
    at only where this run differs from it: the loop's next request replaces the same
    thousands of old results as the last one did."""
    if len(old) != len(new) or not new:
        return _tokens(new, counter) - _tokens(old, counter)
    start = added = 0
    if prior is not None:
        source, (encoding, _), output, (_, prior_added) = prior
        if encoding == counter.encoding_name and len(source) == len(output) <= len(old):
            start = len(source)
            at = list(compress(range(start), map(or_, map(is_not, old, source), map(is_not, new, output))))
            added = prior_added - _replaced(source, output, at, counter) + _replaced(old, new, at, counter)
    at = [start + index for index in compress(count(), map(is_not, old[start:], new[start:]))]
    return added + _replaced(old, new, at, counter)


def _replaced(old: list[Facts], new: list[Facts], at: list[int], counter) -> int:
    """Tokens the records of `new` at `at` add over those of `old` there."""
    pairs = [(old[index], new[index]) for index in at if old[index] is not new[index]]
    if not pairs:
        return 0
    before, after = [a for a, _ in pairs], [b for _, b in pairs]
    return _tokens(after, counter) - _tokens(before, counter)


def _tokens(items: list[Facts], counter) -> int:
    ensure_counted(items, counter)
    return request_tokens(items)


def _image_cut(current: list[Facts], images: SessionImages | None, memo: Memo) -> Cut | None:
    """Where the images this request carries start (image_window.py), remembered for the list."""
    if images is None:
        return None
    remembered = memo.recall(IMAGE_WINDOW, current, images.version)
    if remembered is None:
        cut = image_cut(current, images)
        memo.remember(IMAGE_WINDOW, current, images.version, [], cut)
        return cut
    return remembered[1]


def _request(
    current: list[Facts], counter, memo: Memo, key: tuple, images: SessionImages | None, cut: Cut | None
) -> tuple[list[dict[str, Any]], tuple[int, list[int], list, list[int], list[ToolImages]]]:
    """The final records' API forms and `(tokens, calls_at, rows, parts_at, inserts)` for
    `copy_request`, `copy_parts` and `with_tool_images`, remembered under `key` (encoding,
    images, image cut); what the last request had for the records this one starts with is reused."""
    kept, tokens = 0, 0
    apis: list[dict[str, Any]] = []
    calls_at: list[int] = []
    rows: list[CallRow] = []
    parts_at: list[int] = []
    inserts: list[ToolImages] = []
    last = memo.recall_prefix(REQUEST, current, key)
    if last is not None:  # those records were counted then, in this encoding
        kept, apis, (tokens, calls_at, rows, parts_at, inserts) = last
        tokens -= REPLY_PRIMING if kept else 0
    tail = current[kept:]
    ensure_counted(tail, counter)
    tail_at = [kept + index for index in compress(count(), map(CALLS, tail))]
    tokens += sum(map(TOKENS, tail)) + (REPLY_PRIMING if current else 0)
    tail_apis = list(map(API, tail))
    tail_parts, cut_at = attach_images(tail, tail_apis, images, cut, kept)
    tail_parts = [kept + index for index in tail_parts]
    for index in cut_at:  # its count has every image; some are only their labels now
        tokens += _carried_tokens(tail[index], tail_apis[index], kept + index, cut, counter) - tail[index].tokens
    if images is not None:
        start = kept
        if 0 < kept < len(current) and current[kept].role == "tool" == current[kept - 1].role:
            start = group_start(current, kept - 1)  # a group of results goes on: its images move to its end
            if inserts and inserts[-1][0] == kept - 1:
                tokens -= inserts[-1][2]
                inserts = inserts[:-1]
        tail_inserts = tool_images(current, start, images, counter.count_message, cut)
        tokens += sum(made for _, _, made in tail_inserts)
        inserts = inserts + tail_inserts
    extra = (
        tokens,
        calls_at + tail_at,
        rows + call_rows(tail_at, [current[i].calls for i in tail_at]),
        parts_at + tail_parts,
        inserts,
    )
    return memo.remember(REQUEST, current, key, apis + tail_apis, extra), extra


def _carried_tokens(record: Facts, api: dict[str, Any], index: int, cut: Cut | None, counter) -> int:
    """Tokens of a user message as the cut leaves it: its text and labels, and the images still sent."""
    from agent.images import refs_of

    refs = refs_of(record.message.meta)
    return counter.count_message(api) + sum(ref.tokens for ordinal, ref in enumerate(refs) if sent(cut, index, ordinal))


def _passes(settings: Settings, now_ms: int, policy: CachePolicy) -> list[tuple[str, Callable, dict[str, Any]]]:
    """Passes 1-5 of SPEC §4 in order, each with its parameters; under the `auto` cache
    policy, the savings rules beyond the seeds (issue 31) before externalisation."""
    cfg = settings.context
    savings: list[tuple[str, Callable, dict[str, Any]]] = []
    if policy.mode == "auto":
        savings = [
            (
                stale_file_results.NAME,
                stale_file_results.run,
                {"workspace": str(settings.workspace), "read_placeholder": cfg.file_read_placeholder},
            ),
        ]
    return [
        (active_path.NAME, active_path.run, {}),
        (orphans.NAME, orphans.run, {}),
        (
            terminal_outdated.NAME,
            terminal_outdated.run,
            {
                "now_ms": now_ms,
                "keep_recent": cfg.terminal_keep_recent_results,
                "max_age_ms": cfg.terminal_max_age_ms,
                "placeholder": cfg.terminal_outdated_placeholder,
            },
        ),
        (
            file_reads.NAME,
            file_reads.run,
            {
                "workspace": str(settings.workspace),
                "keep_recent": cfg.file_keep_recent_reads,
                "placeholder": cfg.file_read_placeholder,
            },
        ),
        *savings,
        (externalize.NAME, externalize.run, {"limit": cfg.max_inline_chars, "preview": cfg.inline_preview_chars}),
    ]


def _result(
    api: list[dict[str, Any]],
    steps: list[tuple[str, int, int]],
    tokens: int,
    system_tokens: int,
    tool_tokens: int,
    truncation: TruncationReport | None,
) -> BuildResult:
    report: list[PassReport] = []
    after = tokens
    for name, changed, added in reversed(steps):
        report.append(PassReport(name=name, changed=changed, tokens_before=after - added, tokens_after=after))
        after -= added
    report.reverse()
    for entry in report:
        if entry.changed:  # seed 000 §6.4, seed 003 §6: one line per pass that changed something
            log.info(
                "%s: %d changed, %d → %d tokens", entry.name, entry.changed, entry.tokens_before, entry.tokens_after
            )
    breakdown = TokenBreakdown(system=system_tokens, tools=tool_tokens, messages=tokens)
    # Built from validated parts: validating 5,000 plain dicts again cost more than a pass.
    return BuildResult.model_construct(messages=api, report=report, tokens=breakdown, truncation=truncation)
