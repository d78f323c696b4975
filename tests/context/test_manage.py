"""manage_context's policy (seed 001 §3.3.5) with an in-memory host: when to condense, when to
truncate, what is recorded. The host is the injected boundary (storage, model call); the
end-to-end path through the real loop is tests/context/test_budget_e2e.py."""

from __future__ import annotations

import pytest

from agent.context.budget import compute_budget
from agent.context.condense import CondenseError, CondenseResult
from agent.context.manage import (
    RECONDENSE_MIN_SHARE,
    compact,
    manage_context,
    may_auto_condense,
    truncation_target,
)
from agent.context.pipeline import BuildResult, TokenBreakdown, TruncateTo
from agent.context.truncation import TruncationReport, smart_truncate, truncate_until_fits
from agent.session.models import Message, ToolCall
from agent.settings.schema import ContextSettings

FIXED = 1_000  # system prompt + tools


def size(message: Message) -> int:
    return len(message.content or "")


class Host:
    """Counts characters as tokens; condensing returns a summary of `summary_size` characters."""

    session_id = "s1"

    def __init__(self, *, summary_size: int = 500, fail: str | None = None) -> None:
        self.summary_size = summary_size
        self.fail = fail
        self.history: list[Message] = []
        self.events = []
        self.started = []
        self.condense_calls = 0
        self.truncations: list[int] = []

    async def build(self, history, truncate: TruncateTo | None, flush: bool = False) -> BuildResult:
        last_summary = max((i for i, m in enumerate(history) if m.kind == "summary"), default=0)
        tokens = sum(size(m) for m in history[last_summary:])
        report = None
        if truncate is not None:
            self.truncations.append(truncate.max_tokens)
            report = TruncationReport(
                tokens_before=tokens + FIXED,
                tokens_after=truncate.max_tokens,
                target=truncate.max_tokens,
                messages_deleted=3,
            )
            tokens = truncate.max_tokens - FIXED
        return BuildResult(messages=[], tokens=TokenBreakdown(system=FIXED, messages=tokens), truncation=report)

    def truncate_to(self, max_tokens: int) -> TruncateTo:
        return TruncateTo(max_tokens=max_tokens)

    def count(self, message: Message) -> int:
        return size(message)

    def condense_started(self, trigger, tokens) -> None:
        self.started.append((trigger, tokens))

    async def condense(self, history, trigger, instructions) -> CondenseResult:
        self.condense_calls += 1
        if self.fail:
            raise CondenseError(self.fail)
        summary = Message(
            role="user",
            kind="summary",
            content="s" * self.summary_size,
            meta={"condensed": {"model": "m", "count": len(history), "instructions": instructions}},
        )
        return CondenseResult(
            summary=summary,
            replaced_first_id=history[0].id,
            replaced_last_id=history[-1].id,
            tokens_before=sum(map(size, history)),
            tokens_after=self.summary_size,
            history_text="",
        )

    async def commit(self, result: CondenseResult) -> list[Message]:
        self.history = [*self.history, result.summary]
        return self.history

    async def record(self, event, summary) -> None:
        self.events.append((event, summary))


# Window 10,000, reply 1,000: allowed 8,000; threshold 80% = 8,000 too.
BUDGET = compute_budget(10_000, 1_000, 80.0)
CFG = ContextSettings()


def conversation(chars: int, turns: int = 4) -> list[Message]:
    out = []
    for i in range(turns):
        out.append(Message(role="user", content=f"q{i} " + "x" * (chars // (2 * turns))))
        out.append(Message(role="assistant", content=f"a{i} " + "y" * (chars // (2 * turns))))
    return out


async def run(host: Host, history: list[Message], cfg: ContextSettings = CFG, **kwargs):
    host.history = history
    return await manage_context(history, host, budget=BUDGET, cfg=cfg, **kwargs)


async def test_under_the_budget_nothing_happens():
    host = Host()
    managed = await run(host, conversation(5_000))
    assert managed.build.tokens.total < BUDGET.threshold
    assert not managed.condensed and not managed.truncated and not host.events and host.condense_calls == 0


async def test_over_the_threshold_condenses_and_stops_when_it_fits():
    host = Host()
    managed = await run(host, conversation(9_000))
    assert managed.condensed and not managed.truncated
    assert managed.history[-1].kind == "summary"
    [(event, summary)] = host.events
    assert (event.action, event.trigger, event.outcome) == ("condense", "auto", "ok")
    assert event.tokens_before >= BUDGET.threshold and event.tokens_after == FIXED + 500
    assert summary is managed.history[-1] and event.summary_id == summary.id
    assert host.started == [("auto", event.tokens_before)]


async def test_condensing_off_truncates_toward_the_fallback_target():
    host = Host()
    managed = await run(host, conversation(9_000), cfg=ContextSettings(auto_condense=False))
    assert managed.truncated and host.condense_calls == 0
    [(event, _)] = host.events
    assert event.action == "truncate" and event.outcome == "ok"
    # min(fallback 50000, allowed 8000): the fallback never aims above what the model takes.
    assert host.truncations == [8_000] and event.detail["messages_deleted"] == 3


async def test_a_failed_condense_falls_back_to_truncation():
    host = Host(fail="the provider is down")
    managed = await run(host, conversation(9_000))
    assert managed.truncated and not managed.condensed
    assert [(e.action, e.outcome, e.error) for e, _ in host.events] == [
        ("condense", "failed", "the provider is down"),
        ("truncate", "ok", None),
    ]


async def test_a_summary_still_over_the_threshold_is_followed_by_truncation():
    host = Host(summary_size=8_500)
    managed = await run(host, conversation(9_000))
    assert managed.condensed and managed.truncated
    condense_event, truncate_event = (e for e, _ in host.events)
    assert condense_event.detail["still_over"] is True
    assert truncate_event.tokens_before == condense_event.tokens_after


async def test_no_second_condense_until_the_conversation_since_the_summary_has_grown():
    host = Host(summary_size=8_500)
    history = [
        *conversation(9_000),
        Message(role="user", kind="summary", content="s" * 8_500),
        Message(role="user", content="short follow-up"),
    ]
    assert not may_auto_condense(history, BUDGET, size)
    await run(host, history)
    assert host.condense_calls == 0 and [e.action for e, _ in host.events] == ["truncate"]
    grown = [*history, Message(role="assistant", content="z" * int(RECONDENSE_MIN_SHARE * BUDGET.threshold))]
    assert may_auto_condense(grown, BUDGET, size)


async def test_overflow_aims_below_what_the_provider_rejected():
    host = Host(summary_size=4_000)
    rejected = TokenBreakdown(system=FIXED, messages=6_000)  # under our threshold, yet refused
    managed = await run(host, conversation(6_000), rejected=rejected)
    # limit = 7,000 − 25% of 6,000 = 5,500; the summary build is 5,000: fits, no truncation.
    assert managed.condensed and not managed.truncated
    assert host.events[0][0].trigger == "overflow"


async def test_overflow_without_condensing_truncates_to_the_stricter_limit():
    host = Host()
    rejected = TokenBreakdown(system=FIXED, messages=6_000)
    await run(host, conversation(6_000), cfg=ContextSettings(auto_condense=False), rejected=rejected)
    assert host.truncations == [5_500]


async def test_compact_condenses_whatever_the_budget_and_records_the_instructions():
    host = Host()
    history = conversation(1_000)
    host.history = history
    result, after = await compact(history, host, instructions="focus on X", tokens=2_000)
    assert after[-1] is result.summary
    [(event, _)] = host.events
    assert (event.trigger, event.outcome, event.detail["instructions"]) == ("manual", "ok", "focus on X")


async def test_compact_failure_is_recorded_and_raised():
    host = Host(fail="Too few messages to condense.")
    with pytest.raises(CondenseError):
        await compact([Message(role="user", content="hi")], host, instructions=None, tokens=10)
    assert [(e.action, e.outcome) for e, _ in host.events] == [("condense", "failed")]


def test_truncation_target_defaults_to_the_seed_50000_within_the_allowed_tokens():
    big = compute_budget(200_000, 8_000, 80.0)
    assert truncation_target(CFG, big) == 50_000
    assert truncation_target(CFG, BUDGET) == 8_000
    assert truncation_target(CFG, big, limit=30_000) == 30_000


def tool_loop(steps: int, result_chars: int) -> list[Message]:
    """One user turn followed by `steps` terminal calls with big results."""
    out = [Message(role="user", content="run the checks")]
    for i in range(steps):
        call = ToolCall(id=f"c{i}", name="terminal-execute", arguments='{"command": "make"}')
        out.append(Message(role="assistant", content="", tool_calls=[call]))
        out.append(Message(role="tool", tool_call_id=call.id, tool_name=call.name, content="r" * result_chars))
    return out


def test_truncating_again_reaches_a_target_one_round_cannot():
    messages = tool_loop(12, 1_000)
    once = smart_truncate(messages, count=size, max_tokens=3_000)
    assert not once.report.reached  # the ends alone (1/6 on each side) hold too much
    repeated = truncate_until_fits(messages, count=size, max_tokens=3_000)
    assert repeated.report.reached and repeated.report.tokens_after <= 3_000
    assert repeated.report.tokens_before == once.report.tokens_before
    out = repeated.messages
    assert out[0] is messages[0] and out[-2:] == messages[-2:]  # first user message, last exchange
    ids = {m.id for m in out}
    for m in out:  # still valid: each call with its result
        for call in m.tool_calls:
            assert any(r.tool_call_id == call.id for r in out if r.role == "tool")
        if m.role == "tool":
            assert any(call.id == m.tool_call_id for a in out for call in a.tool_calls)
    assert len(ids) == len(out)
