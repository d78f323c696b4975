"""SPEC §12.11: seed replacements under prompt caching (agent/context/cache_policy.py).

- `exact` is the seeds to the letter; `auto` with a cold cache (no request within the TTL)
  is too;
- in `auto`, requests less than the TTL apart without budget pressure each start with the
  whole previous request, unless a batch was applied because it paid;
- every request is valid, and what was sent is read back from the stored history: a
  resumed session (fresh objects, fresh builder) builds the very same next request.
"""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.builder import RequestBuilder, resolve_policy
from agent.context.cache_policy import EXACT, SENT_META, CachePolicy, sent_log
from agent.context.passes.stale_file_results import SUPERSEDED_EDIT_NOTE
from agent.context.pipeline import build_api_messages
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings
from tests.context.test_orphans import assert_valid
from tests.context.test_pipeline_properties import BASE_MS, TOOLS, histories

TTL = 5 * 60 * 1000
AUTO = CachePolicy(mode="auto", ttl_ms=TTL, read_share=0.1, write_share=1.25)
SETTINGS = Settings(workspace="/ws")
TIGHT = Settings.model_validate(
    {
        "workspace": "/ws",
        "context": {"terminal_keep_recent_results": 1, "file_keep_recent_reads": 1, "terminal_max_age_ms": 60_000},
    }
)


def build(history, now, *, policy=AUTO, settings=SETTINGS, flush=False, builder=None):
    if builder is not None:
        return builder.build(history, now_ms=now, tools=TOOLS, system_prompt="sys", flush=flush)
    return build_api_messages(
        history, now_ms=now, settings=settings, tools=TOOLS, system_prompt="sys", policy=policy, flush=flush
    )


def builder_for(settings=SETTINGS, policy=AUTO) -> RequestBuilder:
    builder = RequestBuilder(settings, "anthropic/claude-sonnet-4-5")
    builder._policy = policy  # the model's own prices give the same mode; fixed here for the rule's figures
    return builder


def answered(history: list[Message], build_result, at: int, reply: Message) -> list[Message]:
    """The loop's step: the request's record goes on the assistant message that answers it."""
    reply.meta = {**reply.meta, **RequestBuilder.sent_record(build_result)}
    reply.created_at = at
    return history + [reply]


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 7_200_000), st.sampled_from([SETTINGS, TIGHT]))
def test_exact_is_the_seeds_and_auto_with_a_cold_cache_is_too(history, offset, settings):
    now = BASE_MS + offset
    seeds = build_api_messages(history, now_ms=now, settings=settings, tools=TOOLS, system_prompt="sys")
    exact = build(history, now, policy=EXACT, settings=settings)
    assert exact.messages == seeds.messages and exact.report == seeds.report
    assert exact.cache.held == 0
    # Cold: the newest request is older than the TTL (or there was none).
    log = sent_log(history)
    cold_now = max(now, (log.at or 0) + TTL)
    cold = build(history, cold_now, settings=settings)
    # The seeds, plus what the savings rules beyond them (run under auto only) made a note.
    seeds_cold = build(history, cold_now, policy=EXACT, settings=settings).messages
    notes = {SUPERSEDED_EDIT_NOTE, settings.context.file_read_placeholder}
    assert len(cold.messages) == len(seeds_cold)
    for sent, seed in zip(cold.messages, seeds_cold, strict=True):
        assert sent == seed or (sent["role"] == "tool" and sent["content"] in notes), (sent, seed)
    assert cold.cache.held == 0


def session_steps(seed: int, gap_ms: tuple[int, ...]):
    """A coding session as the loop grows it: prompts, reads of a few files, commands."""
    rng = random.Random(seed)
    n = 0
    for step in range(40):
        items: list[Message] = []
        if rng.random() < 0.2:
            items.append(Message(role="user", content=f"next {step}"))
        calls = []
        for _ in range(rng.choice([1, 1, 2])):
            n += 1
            if rng.random() < 0.6:
                path = rng.choice(["a.py", "./a.py", "b.py", "c.py"])
                calls.append(ToolCall(id=f"c{n}", name="filesystem-read", arguments=json.dumps({"filePath": path})))
            else:
                calls.append(ToolCall(id=f"c{n}", name="terminal-execute", arguments='{"command": "make"}'))
        reply = Message(role="assistant", content=None, tool_calls=calls)
        results = []
        for call in calls:
            if call.name == "terminal-execute":
                out = "x" * rng.choice([10, 400, 6000])
                content = json.dumps({"command": "make", "stdout": out, "stderr": "", "exitCode": 0})
            else:
                content = "📄 a.py (lines 1-40/40)\n" + "\n".join(f"{k}→line {k} {step}" for k in range(1, 41))
            results.append(Message(role="tool", tool_call_id=call.id, tool_name=call.name, content=content))
        yield items, reply, results, rng.choice(gap_ms)


def run_session(seed, gaps, settings=SETTINGS, policy=AUTO):
    """Each request, built as the loop builds it, with the history it was built from."""
    builder = builder_for(settings, policy)
    history = [Message(role="user", content="start", created_at=BASE_MS)]
    now = BASE_MS
    out = []
    for items, reply, results, gap in session_steps(seed, gaps):
        now += gap
        for m in items:
            m.created_at = now
        history = history + items
        result = builder.build(history, now_ms=now, tools=TOOLS, system_prompt="sys")
        out.append((list(history), now, result))
        history = answered(history, result, now + 500, reply)
        for m in results:
            m.created_at = now + 600
        history = history + results
    return out


def test_warm_requests_extend_the_previous_one_unless_a_batch_paid():
    checked = paid = held = 0
    for settings in (SETTINGS, TIGHT):
        for seed in range(6):
            steps = run_session(seed, gaps=(2_000, 30_000, 90_000, 200_000), settings=settings)
            for (_, _, previous), (_, _, current) in zip(steps, steps[1:], strict=False):
                assert_valid(current.messages[1:])
                held += current.cache.held
                if current.cache.reason == "pays":
                    paid += 1
                    continue
                assert current.cache.reason is None
                assert current.messages[: len(previous.messages)] == previous.messages
                checked += 1
    assert checked > 100 and held > 0  # replacements did become eligible and were held


def test_a_cold_cache_applies_what_was_held_and_it_stays_applied():
    steps = run_session(3, gaps=(2_000, 30_000), settings=TIGHT)
    history, now, warm = steps[-1]
    assert warm.cache.held > 0
    exact = build(history, now, policy=EXACT, settings=TIGHT)
    later = now + TTL  # nobody asked for 5 minutes: the cache is cold
    cold = build(history, later, settings=TIGHT)
    assert cold.cache.reason == "cold" and cold.cache.held == 0
    assert cold.messages == build(history, later, policy=EXACT, settings=TIGHT).messages
    assert len(cold.cache.applied_now) >= warm.cache.held
    # The next request, warm again, keeps them applied (and extends the cold one).
    reply = Message(role="assistant", content="done")
    after = answered(history, cold, later + 100, reply) + [Message(role="user", content="more", created_at=later + 200)]
    again = build(after, later + 300, settings=TIGHT)
    assert again.messages[: len(cold.messages)] == cold.messages
    assert exact.tokens.total <= warm.tokens.total


def test_the_budget_applies_what_was_held():
    steps = run_session(3, gaps=(2_000,), settings=TIGHT)
    history, now, warm = steps[-1]
    assert warm.cache.held > 0
    flushed = build(history, now, settings=TIGHT, flush=True)
    assert flushed.cache.reason == "budget" and flushed.cache.held == 0
    assert flushed.tokens.total == warm.tokens.total - warm.cache.held_tokens
    assert flushed.messages == build(history, now, policy=EXACT, settings=TIGHT).messages


def test_held_replacements_are_not_counted_as_applied_in_the_report():
    steps = run_session(3, gaps=(2_000,), settings=TIGHT)
    history, now, warm = steps[-1]
    exact = build(history, now, policy=EXACT, settings=TIGHT)
    changed = {p.name: p.changed for p in warm.report}
    exact_changed = {p.name: p.changed for p in exact.report}
    held = sum(exact_changed[n] - changed[n] for n in ("terminal_outdated", "file_reads"))
    assert held == warm.cache.held
    assert warm.report[-1].tokens_after == warm.tokens.messages


def test_resume_builds_the_same_next_request():
    for seed in range(4):
        steps = run_session(seed, gaps=(2_000, 30_000, 400_000), settings=TIGHT)
        history, now, warm = steps[-1]
        reloaded = [Message.model_validate_json(m.model_dump_json()) for m in history]
        fresh = builder_for(TIGHT).build(reloaded, now_ms=now, tools=TOOLS, system_prompt="sys")
        assert fresh.messages == warm.messages and fresh.cache == warm.cache


def test_a_rewind_forgets_what_the_abandoned_branch_applied():
    steps = run_session(3, gaps=(2_000, 400_000), settings=TIGHT)
    history, now, _ = steps[-1]
    applied = sent_log(history).applied
    assert applied
    # Back to before the last assistant message that recorded anything: its records go with it.
    cut = max(i for i, m in enumerate(history) if m.role == "assistant" and m.meta.get(SENT_META, {}).get("applied"))
    assert sent_log(history[:cut]).applied < applied


def test_the_policy_follows_the_provider_and_the_setting():
    assert resolve_policy(SETTINGS, "anthropic/claude-sonnet-4-5").mode == "auto"
    assert resolve_policy(SETTINGS, "openai/gpt-5.1").mode == "auto"
    assert resolve_policy(SETTINGS, "cerebras/llama-3.3-70b").mode == "exact"  # no prompt cache
    assert resolve_policy(SETTINGS, "openai/my-local-model").mode == "auto"  # unknown price: the provider caches
    pinned = Settings.model_validate({"workspace": "/ws", "context": {"cache_policy": "exact"}})
    assert resolve_policy(pinned, "anthropic/claude-sonnet-4-5").mode == "exact"
    sonnet = resolve_policy(SETTINGS, "anthropic/claude-sonnet-4-5")
    assert (round(sonnet.read_share, 3), round(sonnet.write_share, 3)) == (0.1, 1.25)
    gpt = resolve_policy(SETTINGS, "openai/gpt-5.1")
    assert (round(gpt.read_share, 3), gpt.write_share) == (0.1, 1.0)


def test_a_large_replacement_near_the_end_pays_for_itself_at_once():
    """A big read that a newer read of the same file replaces right away: writing the little
    that follows it again costs less than reading the big one on the requests to come."""
    big = "📄 a.py (lines 1-2000/2000)\n" + "\n".join(f"{k}→value_{k} = compute({k})" for k in range(1, 2001))
    small = "📄 a.py (lines 1-1/2000)\n1→x"
    read = '{"filePath": "a.py"}'
    history = [Message(role="user", content="look", created_at=BASE_MS)]
    builder = builder_for(TIGHT)
    now = BASE_MS
    for n, body in enumerate((big, small), start=1):
        now += 1_000
        build_result = builder.build(history, now_ms=now, tools=TOOLS, system_prompt="sys")
        call = ToolCall(id=f"r{n}", name="filesystem-read", arguments=read)
        history = answered(history, build_result, now, Message(role="assistant", tool_calls=[call]))
        history = history + [
            Message(role="tool", tool_call_id=call.id, tool_name=call.name, content=body, created_at=now + 10)
        ]
    result = builder.build(history, now_ms=now + 2_000, tools=TOOLS, system_prompt="sys")
    assert result.cache.reason == "pays" and result.cache.held == 0
    assert result.cache.applied_now == [history[2].id]
    assert result.messages == build(history, now + 2_000, policy=EXACT, settings=TIGHT).messages
