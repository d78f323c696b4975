"""Terminal results replaced on warm builds (agent/context/passes/terminal_outdated.py), pinned where
mutation testing found it unwatched (issue 36, scripts/mutation.sh).

The loop's next request is the last one's records plus a few, a little later, and the pass
answers it from its last run. That shortcut must give what a cold run gives, whatever is
appended: in particular a result that no name classified (an imported result, or one whose
call comes later) must be classified again once a call naming it arrives. The property
compares warm runs with cold ones over growing histories and a moving clock.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.facts import facts_of
from agent.context.passes import terminal_outdated
from agent.context.state import PassMemory
from agent.session.models import Message, ToolCall

TERMINAL = "terminal-execute"
READ = "filesystem-read"
PLACEHOLDER = terminal_outdated.OUTDATED_PLACEHOLDER
BASE = 1_800_000_000_000
MINUTE = 60_000
OK = json.dumps({"stdout": "built", "stderr": "", "exitCode": 0})
STDERR = json.dumps({"stdout": "", "stderr": "warning: x", "exitCode": 0})


def call(call_id: str, name: str = TERMINAL, created_at: int = 0) -> Message:
    return Message(
        role="assistant",
        content=None,
        created_at=created_at,
        tool_calls=[ToolCall(id=call_id, name=name, arguments="{}")],
    )


def result(
    call_id: str, content: str = OK, *, name: str | None = TERMINAL, created_at: int = BASE, status: str = "ok"
) -> Message:
    return Message(
        role="tool", tool_call_id=call_id, tool_name=name, content=content, created_at=created_at, status=status
    )


def contents(facts) -> list[str | None]:
    return [f.message.content for f in facts]


def cold(messages, now, **kw):
    out, changed = terminal_outdated.run(facts_of(messages), memory=PassMemory(), now_ms=now, **kw)
    return contents(out), changed


def warm_steps(messages, steps, **kw):
    """Runs over growing prefixes of one record list with one memory, each checked against a
    cold run of the same prefix: [(cut, now)…]."""
    facts = facts_of(messages)
    memory = PassMemory()
    for cut, now in steps:
        out, changed = terminal_outdated.run(facts[:cut], memory=memory, now_ms=now, **kw)
        assert (contents(out), changed) == cold(messages[:cut], now, **kw), (cut, now)
    return out, changed


def test_a_result_classified_by_a_later_call_is_replaced_on_a_warm_build():
    """The result has no tool name and plain content; the call naming it as a terminal run
    arrives in the next build."""
    messages = [
        Message(role="user", content="go", created_at=BASE),
        result("late", "plain text", name=None, created_at=BASE),
        call("late", TERMINAL, created_at=BASE + MINUTE),
    ]
    now = BASE + 60 * MINUTE
    out, changed = warm_steps(messages, [(2, now), (3, now)], keep_recent=0)
    assert changed == 1 and contents(out)[1] == PLACEHOLDER
    # the result itself came in a warm build too
    out, changed = warm_steps(messages, [(1, now), (2, now), (3, now)], keep_recent=0)
    assert changed == 1 and contents(out)[1] == PLACEHOLDER
    # named a read instead: stays, and an imported result that looks like a terminal run is
    # no longer one once its call names another tool
    messages[2] = call("late", READ, created_at=BASE + MINUTE)
    messages[1] = result("late", OK, name=None, created_at=BASE)
    out, changed = warm_steps(messages, [(2, now), (3, now)], keep_recent=0)
    assert changed == 0 and contents(out)[1] == OK


def test_the_first_call_of_an_id_names_it():
    messages = [result("x", OK, name=None, created_at=BASE), call("x", READ), call("x", TERMINAL)]
    assert cold(messages, BASE + 60 * MINUTE, keep_recent=0) == ([OK, None, None], 0)
    warm_steps(messages, [(1, BASE + 60 * MINUTE), (2, BASE + 60 * MINUTE), (3, BASE + 60 * MINUTE)], keep_recent=0)


def test_time_moving_on_replaces_what_was_waiting():
    messages = [call("a"), result("a", created_at=BASE), call("b"), result("b", created_at=BASE + MINUTE)]
    warm_steps(
        messages,
        [
            (2, BASE + MINUTE),
            (4, BASE + 15 * MINUTE),
            (4, BASE + 15 * MINUTE + 1),
            (4, BASE + 16 * MINUTE + 1),
            (4, BASE + 60 * MINUTE),
        ],
        keep_recent=0,
    )
    out, changed = warm_steps(messages, [(4, BASE + 16 * MINUTE + 1)], keep_recent=0)
    assert changed == 2


def test_the_recent_slots_move_to_newer_results():
    messages = []
    for i in range(4):
        messages += [call(f"c{i}"), result(f"c{i}", created_at=BASE + i * MINUTE)]
    late = BASE + 60 * MINUTE
    out, changed = warm_steps(messages, [(2, late), (4, late), (6, late), (8, late)], keep_recent=2)
    assert changed == 2 and contents(out)[1::2] == [PLACEHOLDER, PLACEHOLDER, OK, OK]


def test_errors_stay_and_take_no_slot_on_warm_builds_too():
    messages = [
        call("a"),
        result("a", created_at=BASE),
        call("b"),
        result("b", STDERR, created_at=BASE + MINUTE),
        call("c"),
        result("c", "Error: failed", created_at=BASE + MINUTE),
        call("d"),
        result("d", OK, created_at=BASE + MINUTE, status="error"),
    ]
    late = BASE + 60 * MINUTE
    out, changed = warm_steps(messages, [(2, late), (4, late), (6, late), (8, late)], keep_recent=1)
    assert changed == 0  # `a` keeps the one slot: the others are errors
    out, changed = warm_steps(
        messages + [call("e"), result("e", created_at=BASE + 2 * MINUTE)], [(8, late), (10, late)], keep_recent=1
    )
    assert changed == 1 and contents(out)[1] == PLACEHOLDER


def test_a_clock_going_back_or_other_settings_run_in_full():
    messages = [call("a"), result("a", created_at=BASE), call("b"), result("b", created_at=BASE + MINUTE)]
    facts = facts_of(messages)
    memory = PassMemory()
    terminal_outdated.run(facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0)
    out, changed = terminal_outdated.run(facts, memory=memory, now_ms=BASE + 2 * MINUTE, keep_recent=0)
    assert changed == 0 and contents(out) == contents(facts)
    terminal_outdated.run(facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0)
    out, changed = terminal_outdated.run(facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=5)
    assert changed == 0
    out, changed = terminal_outdated.run(facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=-3)
    assert changed == 2  # a negative count keeps nothing
    out, changed = terminal_outdated.run(
        facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0, max_age_ms=120 * MINUTE
    )
    assert changed == 0
    out, changed = terminal_outdated.run(
        facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0, placeholder="old"
    )
    assert changed == 2 and contents(out)[1] == "old"
    # a shorter list, or one whose records are not the same, is not an extension
    out, changed = terminal_outdated.run(facts[:2], memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0)
    assert changed == 1
    other = facts_of(messages)
    terminal_outdated.run(facts, memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0)
    assert (
        terminal_outdated.run(other[:1] + facts[1:2], memory=memory, now_ms=BASE + 60 * MINUTE, keep_recent=0)[1] == 1
    )


def test_nothing_replaced_gives_back_the_same_list():
    facts = facts_of([call("a"), result("a", created_at=BASE)])
    memory = PassMemory()
    out, changed = terminal_outdated.run(facts, memory=memory, now_ms=BASE + MINUTE)
    assert out is facts and changed == 0
    longer = facts + facts_of([call("b"), result("b", created_at=BASE + MINUTE)])
    out, changed = terminal_outdated.run(longer, memory=memory, now_ms=BASE + MINUTE)
    assert out is longer and changed == 0


def test_a_placeholder_already_there_is_not_replaced_again():
    messages = [call("a"), result("a", PLACEHOLDER, created_at=BASE), call("b"), result("b", created_at=BASE)]
    assert cold(messages, BASE + 60 * MINUTE, keep_recent=0) == ([None, PLACEHOLDER, None, PLACEHOLDER], 1)
    # the same length as the placeholder but other text is an ordinary result
    same_length = "x" * len(PLACEHOLDER)
    messages[1] = result("a", same_length, created_at=BASE)
    assert cold(messages, BASE + 60 * MINUTE, keep_recent=0) == ([None, PLACEHOLDER, None, PLACEHOLDER], 2)


def test_stderr_of_a_terminal_result():
    late = BASE + 60 * MINUTE
    for content, kept in [
        (json.dumps({"stdout": "", "stderr": "", "exitCode": 0}), False),
        (json.dumps({"stdout": "", "stderr": "w", "exitCode": 0}), True),
        (json.dumps({"stdout": "", "stderr": None, "exitCode": 0}), False),
        (json.dumps({"stdout": "", "stderr": ["w"], "exitCode": 0}), False),
        (json.dumps([{"stderr": "w"}]), False),
        ('{"stderr": "w"', False),
        ("[" * 100_000 + '"stderr"' + "]" * 100_000, False),
    ]:
        messages = [call("a"), result("a", content, created_at=BASE)]
        out, changed = cold(messages, late, keep_recent=0)
        assert changed == (0 if kept else 1), content[:40]
    # stderr is read only for terminal results
    messages = [call("a", READ), result("a", STDERR, name=READ, created_at=BASE)]
    assert cold(messages, late, keep_recent=0)[1] == 0


def test_how_a_result_is_known_as_a_terminal_run():
    late = BASE + 60 * MINUTE
    for content in ('{"stdout": 1}', '{"stderr": ""}', '{"exitCode": 0}'):
        assert cold([result("i", content, name=None)], late, keep_recent=0)[1] == 1, content
    assert cold([result("i", "plain", name=None)], late, keep_recent=0)[1] == 0
    assert cold([result("i", OK, name=READ)], late, keep_recent=0)[1] == 0  # its name wins
    assert cold([result("i", "plain", name=TERMINAL)], late, keep_recent=0)[1] == 1
    assert cold([Message(role="tool", tool_call_id=None, content=OK, created_at=BASE)], late, keep_recent=0)[1] == 1


def test_a_result_without_a_time_takes_the_time_before_it_for_its_order():
    """No timestamp: never replaced, but ordered at the last time seen before it."""
    messages = [
        call("a", created_at=BASE + 5 * MINUTE),
        result("a", created_at=0),
        call("b"),
        result("b", created_at=BASE),
    ]
    out, changed = cold(messages, BASE + 60 * MINUTE, keep_recent=1)
    # `a` (untimed, ordered at +5 min) is the newest and takes the slot; `b` is replaced
    assert changed == 1 and out[3] == PLACEHOLDER and out[1] == OK
    warm_steps(messages, [(2, BASE + 60 * MINUTE), (4, BASE + 60 * MINUTE)], keep_recent=1)


# -- property: a warm run is a cold run -------------------------------------------------------------

message_strategy = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["result", "result", "call", "user"]),
        "id": st.sampled_from(["a", "b", "c", "d", "e"]),
        "name": st.sampled_from([TERMINAL, TERMINAL, READ, None]),
        "content": st.sampled_from([OK, STDERR, "Error: no", "plain", PLACEHOLDER, '{"stdout": "x"']),
        "status": st.sampled_from(["ok", "ok", "error"]),
        "minute": st.one_of(st.none(), st.integers(0, 40)),
    }
)


def message_of(spec) -> Message:
    created = 0 if spec["minute"] is None else BASE + spec["minute"] * MINUTE
    if spec["kind"] == "call":
        return call(spec["id"], spec["name"] or TERMINAL, created_at=created)
    if spec["kind"] == "user":
        return Message(role="user", content="u", created_at=created)
    return result(spec["id"], spec["content"], name=spec["name"], created_at=created, status=spec["status"])


@hsettings(max_examples=100, deadline=None)
@given(
    st.lists(message_strategy, min_size=1, max_size=16),
    st.lists(st.tuples(st.integers(0, 16), st.integers(0, 30)), min_size=1, max_size=5),
    st.integers(0, 3),
    st.sampled_from([5 * MINUTE, 15 * MINUTE]),
)
def test_property_a_warm_run_is_a_cold_run(specs, steps, keep, max_age):
    messages = [message_of(spec) for spec in specs]
    now = BASE + 20 * MINUTE
    plan = []
    for cut, later in steps:
        now += later * MINUTE // 2
        plan.append((min(cut, len(messages)), now))
    plan.sort(key=lambda step: step[0])
    warm_steps(messages, plan, keep_recent=keep, max_age_ms=max_age)


def test_untimed_results_over_several_warm_builds_keep_the_last_time_seen():
    messages = [call("a", created_at=BASE), result("a", created_at=BASE)]
    messages += [call("b"), result("b", created_at=0), call("c"), result("c", created_at=0)]
    late = BASE + 60 * MINUTE
    out, changed = warm_steps(messages, [(2, late), (4, late), (6, late)], keep_recent=1)
    assert changed == 1 and contents(out)[1] == PLACEHOLDER
