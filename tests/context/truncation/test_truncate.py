"""`smart_truncate` end to end: worked examples with exact numbers, then properties over
generated histories."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.passes import orphans
from agent.context.truncation import smart_truncate
from tests.context.test_orphans import assert_valid
from tests.context.test_pipeline_properties import histories
from tests.context.truncation import calls, count, ids, read_result, result, say, user


def conversation():
    """m0 user 10 · m1..m9 alternating assistant/user of 100 · m10 user 10 · m11 assistant 20.

    Total 940: 1/6 ≈ 156.7 lies in m2, 5/6 ≈ 783.3 in m8, so the middle is m2..m8.
    """
    history = [user(10, id="m0")]
    for i in range(1, 10):
        history.append((say if i % 2 else user)(100, id=f"m{i}"))
    history += [user(10, id="m10"), say(20, id="m11")]
    return history


def test_under_the_target_after_step_3_nothing_is_deleted():
    history = conversation()
    out = smart_truncate(history, count=count, max_tokens=940)
    assert out.messages == history
    r = out.report
    assert (r.tokens_before, r.tokens_after, r.middle, r.messages_deleted, r.reached) == (940, 940, (2, 8), 0, True)


def test_worked_example_one_batch_from_the_centre():
    history = conversation()
    out = smart_truncate(history, count=count, max_tokens=600)
    # excess 340, average 700/7 = 100 → batch ceil(3.4) = 4: m5, m4, m6, m3 (centre outwards).
    assert ids(out.messages) == ["m0", "m1", "m2", "m7", "m8", "m9", "m10", "m11"]
    r = out.report
    assert (r.tokens_after, r.messages_deleted, r.batches, r.reached) == (540, 4, 1, True)
    assert r.middle_messages_left == 3


def test_fixed_tokens_count_towards_the_target():
    out = smart_truncate(conversation(), count=count, max_tokens=600, fixed_tokens=100)
    # excess 440 → 5 messages: m5 m4 m6 m3 m7.
    assert ids(out.messages) == ["m0", "m1", "m2", "m8", "m9", "m10", "m11"]
    assert out.report.tokens_after == 100 + 440


def test_unreachable_target_keeps_the_protected_ends():
    out = smart_truncate(conversation(), count=count, max_tokens=0)
    assert ids(out.messages) == ["m0", "m1", "m9", "m10", "m11"]
    assert not out.report.reached and out.report.middle_messages_left == 0


def test_first_user_message_kept_even_when_it_holds_the_middle():
    history = [user(2000, id="task"), say(10), user(10), say(10), user(10, id="now"), say(10, id="last")]
    out = smart_truncate(history, count=count, max_tokens=100)
    assert ids(out.messages)[0] == "task" and "now" in ids(out.messages) and ids(out.messages)[-1] == "last"


def test_last_exchange_kept_even_when_it_holds_the_5_6_point():
    big = read_result("r", "big.py", lines=400)
    history = [user(10), say(50), user(50), say(50), user(10, id="now"), calls(("r", "filesystem-read")), big]
    out = smart_truncate(history, count=count, max_tokens=10)
    assert out.messages[-2:] == history[-2:]
    assert_valid([m.to_api() for m in out.messages])


def test_full_run_filters_folds_and_deletes():
    """Seed 001 §3.2.5: 步骤2「过滤中间段的工具调用」(filter the tool calls *in the middle*),
    步骤3「折叠所有文件查看结果」(fold *all* file-view results): the terminal calls in the
    middle go, the read in the middle and the read of the last exchange are both folded."""
    folds = []

    def fold(paths):
        folds.append(paths)
        return f"<system-reminder>{paths[0]}: def f</system-reminder>"

    history = [
        user(10, id="task"),
        say(200),
        calls(("e1", "terminal-execute"), ("r1", "filesystem-read"), content="checking"),
        result("e1", "x" * 400),
        read_result("r1", "a.py", lines=40),
        calls(("e2", "terminal-execute")),
        result("e2", "y" * 400),
        say(40),
        user(40),
        say(40),
        user(10, id="now"),
        calls(("r2", "filesystem-read")),
        read_result("r2", "b.py", lines=40),
    ]
    before = copy.deepcopy([m.model_dump() for m in history])
    out = smart_truncate(history, count=count, max_tokens=10_000, fold=fold)
    assert [m.model_dump() for m in history] == before
    kinds = [
        (m.role, m.tool_call_id or m.content[:8] if m.content else None, [t.id for t in m.tool_calls])
        for m in out.messages
    ]
    assert kinds[2] == ("assistant", "checking", ["r1"])
    assert out.messages[3].content == "<system-reminder>a.py: def f</system-reminder>"
    # The read of the last exchange is outside the middle and folded as well.
    assert out.messages[-1].content == "<system-reminder>b.py: def f</system-reminder>"
    assert out.messages[-1].id == history[-1].id and out.messages[-2] is history[-2]
    assert folds == [["a.py"], ["b.py"]]
    r = out.report
    assert (r.calls_removed, r.results_removed, r.results_folded, r.files_folded) == (2, 2, 2, ["a.py", "b.py"])
    assert r.messages_deleted == 0 and r.tokens_after < r.tokens_before
    assert_valid([m.to_api() for m in out.messages])


def test_orphans_in_the_input_are_repaired_first():
    history = [user(), calls(("a", "terminal-execute")), result("stray"), say()]
    out = smart_truncate(history, count=count, max_tokens=10_000)
    assert_valid([m.to_api() for m in out.messages])
    assert out.report.orphans_repaired == 2


def test_default_count_is_tiktoken():
    history = [user(10), say(10), user(10), say(10)]
    out = smart_truncate(history, max_tokens=50_000)
    assert out.messages == history and out.report.tokens_before > 0


def test_empty_history():
    out = smart_truncate([], count=count)
    assert out.messages == [] and out.report.tokens_after == 0 and out.report.middle is None


# Properties --------------------------------------------------------------------------------


def fold_first(paths):
    return f"<system-reminder>{paths[0]}</system-reminder>"


@hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 150), st.sampled_from([None, fold_first]), st.integers(0, 20))
def test_truncation_properties(history, target, fold, fixed):
    kwargs = {"count": count, "max_tokens": target, "fixed_tokens": fixed}
    if fold:
        kwargs["fold"] = fold
    before = copy.deepcopy([m.model_dump() for m in history])
    first = smart_truncate(history, **kwargs)
    second = smart_truncate(history, **kwargs)
    out, report = first.messages, first.report

    assert [m.model_dump() for m in history] == before  # input never mutated
    assert [m.model_dump() for m in out] == [m.model_dump() for m in second.messages]  # deterministic
    assert report == second.report
    assert_valid([m.to_api() for m in out])

    valid, _ = orphans.apply(history)
    total = sum(count(m) for m in out) + fixed
    assert report.tokens_after == total <= report.tokens_before
    assert report.reached == (total <= target)
    assert report.reached or report.middle_messages_left == 0  # under the target when achievable

    # Nothing invented, order kept; the first and last user messages and the last message stay.
    kept = [m.id for m in out]
    source = [m.id for m in valid]
    assert kept == [i for i in source if i in set(kept)]
    users = [m.id for m in valid if m.role == "user"]
    if users:
        assert users[0] in kept and users[-1] in kept
    if valid:
        assert valid[-1].id in kept
