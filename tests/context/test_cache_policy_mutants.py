"""The prompt-cache policy's arithmetic and bookkeeping (agent/context/cache_policy.py), pinned where
mutation testing found it unwatched (issue 36, scripts/mutation.sh).

tests/context/test_cache_policy.py checks the policy through whole sessions, where only
"one big replacement pays at once" ever decided; here the hold-or-apply formula is driven
to both sides of its threshold and onto it, and the sent-record scan is read across growth,
rewinds and in-place appends. Records are plain objects with the two fields the policy
reads (`id`, `tokens`); a replacement is a different object at the same position.

With read 0.25×, write 1.5× and a horizon of 3 requests (all exact in binary), applying
what frees F tokens and rewrites a suffix of S tokens gains
F·0.25·3 − (S·1.5 − (S+F)·0.25) = F − 1.25·S: it pays when F > 1.25·S.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agent.context.cache_policy import (
    NOTHING_SENT,
    SENT_META,
    CacheDecision,
    CachePolicy,
    SentLog,
    SentScan,
    decide,
    paying_cut,
    sent_log,
)
from agent.session.models import Message

POLICY = CachePolicy(mode="auto", ttl_ms=1000, read_share=0.25, write_share=1.5, horizon_requests=3)
NOW = 10_000


def records(sizes: list[int], originals: dict[int, int]) -> tuple[list, list]:
    """`after` with `sizes`; `before` the same objects but at `originals`' positions, whose
    original size is given (the replacement made them smaller)."""
    after = [SimpleNamespace(id=f"m{i}", tokens=size) for i, size in enumerate(sizes)]
    before = [SimpleNamespace(id=f"m{i}", tokens=originals[i]) if i in originals else r for i, r in enumerate(after)]
    return before, after


def cut(sizes, originals, unsent=frozenset(), policy=POLICY) -> int:
    before, after = records(sizes, originals)
    pending = sorted(originals)
    return paying_cut(before, after, pending, SentLog(NOW, frozenset(), frozenset(unsent)), policy)


# -- the formula: F − 1.25·S ----------------------------------------------------------------


@pytest.mark.parametrize(
    "freed, held",
    [
        (130, 0),  # 130 − 125 = 5 > 0: applied at once
        (120, 1),  # 120 − 125 < 0: held
        (125, 1),  # exactly 0: nothing to gain, held
        (1000, 0),
        (0, 1),
    ],
)
def test_one_replacement_pays_when_it_frees_more_than_a_quarter_over_the_rewrite(freed, held):
    # the replaced record ends at 10 tokens, then 90 more: S = 100
    assert cut([50, 10, 40, 50], {1: 10 + freed}) == held


def test_the_suffix_counts_from_the_replaced_record_to_the_end():
    """S includes the replacement itself and everything after it, not what comes before."""
    # S = 10 + 90 = 100 whatever comes before
    assert cut([100_000, 10, 90], {1: 140}) == 0  # F = 130
    # the replacement's own size is in S: at 20 tokens, S = 110 and F = 130 no longer pays (137.5)
    assert cut([100_000, 20, 90], {1: 150}) == 1
    # the last record alone: S = its own size
    assert cut([500, 500, 8], {2: 8 + 11}) == 0  # F = 11 > 10
    assert cut([500, 500, 8], {2: 8 + 10}) == 1  # F = 10 = 1.25 · 8


def test_what_no_request_carried_yet_is_written_either_way():
    """Trailing records not sent yet are out of S: they cost a write held or not."""
    assert cut([10, 90, 1000], {0: 140}, unsent={"m2"}) == 0  # S = 100, F = 130
    assert cut([10, 90, 1000], {0: 130}, unsent={"m2"}) == 1  # S = 100, F = 120: the sent 90 still counts
    assert cut([10, 90, 1000], {0: 140}) == 1  # S = 1100 when m2 was sent
    # only the unsent records at the end: one sent after them counts again
    assert cut([10, 1000, 90], {0: 140}, unsent={"m1"}) == 1
    # everything unsent: nothing to rewrite, any saving pays
    assert cut([10, 90], {0: 11}, unsent={"m0", "m1"}) == 0


@pytest.mark.parametrize(
    "sizes, originals, held",
    [
        # newest alone: F=130, S=100 → 5; both: F=260, S=200 → 10: both, the better
        ([10, 90, 10, 90], {0: 140, 2: 140}, 0),
        # newest alone: F=130, S=100 → 5; both: F=140, S=200 → −110: only the newest
        ([10, 90, 10, 90], {0: 20, 2: 140}, 1),
        # newest alone: F=10, S=100 → −115; both: F=400, S=200 → 150: both
        ([10, 90, 10, 90], {0: 400, 2: 20}, 0),
        # neither pays
        ([10, 90, 10, 90], {0: 20, 2: 20}, 2),
    ],
)
def test_a_batch_is_cut_where_it_gains_most(sizes, originals, held):
    assert cut(sizes, originals) == held


def test_a_tie_between_batches_keeps_the_smaller_one():
    # newest alone: F = 130, S = 100 → 5; both: F = 130 + 125, S = 200 → 5 too
    assert cut([10, 90, 10, 90], {0: 10 + 125, 2: 140}) == 1


def test_the_prices_and_horizon_come_from_the_policy():
    # F = 130, S = 100. Cheaper writes (1.0×): 0.75F − (S − 0.25(S+F)) = 97.5 − 42.5 > 0
    assert cut([10, 90], {0: 140}, policy=POLICY.model_copy(update={"write_share": 1.0})) == 0
    # F = 110 fails at 1.5× (110 < 125) and pays at 1.0× (82.5 − 47.5 > 0)
    assert cut([10, 90], {0: 120}) == 1
    assert cut([10, 90], {0: 120}, policy=POLICY.model_copy(update={"write_share": 1.0})) == 0
    # a longer horizon reads the saving more often: F = 110, horizon 4: 110 − 125 + 27.5 > 0
    assert cut([10, 90], {0: 120}, policy=POLICY.model_copy(update={"horizon_requests": 4})) == 0
    # dearer reads (0.5×): F·0.5·3 − (1.5S − 0.5(S+F)) = 2F − S: F = 60 pays, F = 50 does not
    assert cut([10, 90], {0: 70}, policy=POLICY.model_copy(update={"read_share": 0.5})) == 0
    assert cut([10, 90], {0: 60}, policy=POLICY.model_copy(update={"read_share": 0.5})) == 1


# -- decide: which replacements are pending, held, applied ----------------------------------------


def log(at=NOW - 10, applied=(), unsent=()) -> SentLog:
    return SentLog(at, frozenset(applied), frozenset(unsent))


def test_nothing_replaced_decides_nothing():
    before, after = records([10, 20], {})
    held, decision = decide(before, after, log(), POLICY, now_ms=NOW, flush=False)
    assert held == [] and decision == CacheDecision(mode="auto", at=NOW)


def test_exact_applies_everything_at_once():
    before, after = records([10, 90], {0: 1000})
    held, decision = decide(before, after, log(), POLICY.model_copy(update={"mode": "exact"}), now_ms=NOW, flush=False)
    assert held == [] and decision == CacheDecision(mode="exact", at=NOW, applied_now=["m0"])


def test_warm_holds_what_does_not_pay():
    before, after = records([10, 90, 10, 90], {0: 20, 2: 25})
    held, decision = decide(before, after, log(), POLICY, now_ms=NOW, flush=False)
    assert held == [0, 2]
    assert decision == CacheDecision(mode="auto", at=NOW, held=2, held_tokens=10 + 15)


def test_warm_applies_the_newest_that_pay_and_holds_the_rest():
    before, after = records([10, 90, 10, 90], {0: 20, 2: 140})
    held, decision = decide(before, after, log(), POLICY, now_ms=NOW, flush=False)
    assert held == [0]
    assert decision == CacheDecision(mode="auto", at=NOW, held=1, held_tokens=10, applied_now=["m2"], reason="pays")


@pytest.mark.parametrize(
    "at, flush, reason",
    [
        (None, False, "cold"),  # no request yet
        (NOW - 1000, False, "cold"),  # exactly the TTL ago
        (NOW - 5000, False, "cold"),
        (NOW - 999, True, "budget"),
        (None, True, "budget"),
    ],
)
def test_a_cold_cache_or_the_budget_applies_everything(at, flush, reason):
    before, after = records([10, 90, 10, 90], {0: 20, 2: 25})
    held, decision = decide(before, after, log(at=at), POLICY, now_ms=NOW, flush=flush)
    assert held == []
    assert decision == CacheDecision(mode="auto", at=NOW, applied_now=["m0", "m2"], reason=reason)


def test_one_millisecond_inside_the_ttl_is_warm():
    before, after = records([10, 90], {0: 20})
    held, decision = decide(before, after, log(at=NOW - 999), POLICY, now_ms=NOW, flush=False)
    assert held == [0] and decision.reason is None


def test_applied_before_is_not_pending_and_not_applied_again():
    before, after = records([10, 90, 10, 90], {0: 20, 2: 25})
    held, decision = decide(before, after, log(applied={"m0"}), POLICY, now_ms=NOW, flush=False)
    assert held == [2] and decision.applied_now == [] and decision.held_tokens == 15


def test_a_replacement_of_an_unsent_message_costs_nothing_and_is_applied():
    before, after = records([10, 90, 10, 90], {0: 20, 2: 25})
    held, decision = decide(before, after, log(unsent={"m2", "m3"}), POLICY, now_ms=NOW, flush=False)
    assert held == [0] and decision.applied_now == ["m2"] and decision.reason is None
    # even when the cache is cold, only what was sent needs a reason
    held, decision = decide(before, after, log(unsent={"m0", "m1", "m2", "m3"}), POLICY, now_ms=NOW, flush=True)
    assert held == [] and decision.applied_now == ["m0", "m2"] and decision.reason is None


# -- the sent records ---------------------------------------------------------------------------


def user(text: str) -> Message:
    return Message(role="user", content=text)


def reply(created_at: int, record: object = None) -> Message:
    meta = {SENT_META: record} if record is not None else {}
    return Message(role="assistant", content="ok", created_at=created_at, meta=meta)


def test_nothing_sent_without_an_assistant_message():
    assert sent_log([]) == NOTHING_SENT
    assert sent_log([user("a"), user("b"), user("c")]) == NOTHING_SENT


def test_the_newest_request_and_what_came_after_it():
    u1, a1, u2 = user("a"), reply(100), user("b")
    assert sent_log([u1, a1, u2]) == SentLog(100, frozenset(), frozenset({u2.id}))
    # an assistant message first in the history is a request too
    a0 = reply(50)
    assert sent_log([a0]) == SentLog(50, frozenset(), frozenset())
    assert sent_log([a0, u1]) == SentLog(50, frozenset(), frozenset({u1.id}))


def test_records_say_when_and_what_was_applied():
    u1 = user("a")
    a1 = reply(100, {"at": 90, "applied": ["x", "y"]})
    a2 = reply(200, {"at": 190, "applied": ["z", 7]})
    a3 = reply(300, {"at": "soon", "applied": "w"})  # malformed: its own time, nothing applied
    assert sent_log([u1, a1]) == SentLog(90, frozenset({"x", "y"}), frozenset())
    assert sent_log([u1, a1, a2]) == SentLog(190, frozenset({"x", "y", "z"}), frozenset())
    assert sent_log([u1, a1, a2, a3]) == SentLog(300, frozenset({"x", "y", "z"}), frozenset())
    assert sent_log([u1, reply(100, {"at": 90, "applied": []})]) == SentLog(90, frozenset(), frozenset())
    assert sent_log([u1, reply(100, {"at": 90})]) == SentLog(90, frozenset(), frozenset())


def test_a_message_without_a_time_keeps_the_last_known_one():
    a1, a2 = reply(100), reply(0)
    assert sent_log([a1, a2]).at == 100
    assert sent_log([reply(0)]) == SentLog(None, frozenset(), frozenset())


def test_the_scan_reads_only_what_was_appended_and_equals_a_fresh_read():
    history = [user("a"), reply(100, {"at": 90, "applied": ["x"]}), user("b")]
    scan = SentScan()
    assert scan.log(history) == sent_log(history)
    longer = history + [reply(200, {"at": 190, "applied": ["y"]}), user("c")]
    assert scan.log(longer) == sent_log(longer) == SentLog(190, frozenset({"x", "y"}), frozenset({longer[-1].id}))
    assert scan.log(longer) == sent_log(longer)  # the same history again
    # nothing new applied: the same set as before
    longest = longer + [reply(300)]
    assert scan.log(longest) == SentLog(300, frozenset({"x", "y"}), frozenset())


def test_the_scan_sees_a_list_that_grew_in_place():
    """The loop may append to the very list it built from: the scan must not share it."""
    history = [user("a"), reply(100)]
    scan = SentScan()
    scan.log(history)
    history.append(reply(200, {"at": 190, "applied": ["x"]}))
    assert scan.log(history) == SentLog(190, frozenset({"x"}), frozenset())


def test_a_rewind_forgets_what_the_abandoned_branch_applied():
    u1 = user("a")
    branch = [u1, reply(100, {"at": 90, "applied": ["x"]})]
    scan = SentScan()
    assert scan.log(branch).applied == {"x"}
    # the same length, another message at the end: another history
    other = [u1, reply(150)]
    assert scan.log(other) == SentLog(150, frozenset(), frozenset())
    # shorter: back to before any request
    scan.log(branch)
    assert scan.log([u1]) == NOTHING_SENT
    # and a longer one that is not an extension either, read from its very first message
    scan.log(branch)
    assert scan.log([user("z"), reply(10), user("y")]).applied == frozenset()
    starts_with_a_request = [reply(20, {"at": 15, "applied": ["q"]}), user("y"), user("x")]
    assert scan.log(starts_with_a_request) == SentLog(
        15, frozenset({"q"}), frozenset(m.id for m in starts_with_a_request[1:])
    )
