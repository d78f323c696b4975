"""Orphan repair (agent/context/passes/orphans.py) counted exactly, pinned where mutation testing
found it unwatched (issue 36, scripts/mutation.sh).

The count is what the report and the budget step see: a repair reported on a valid request
would say the history is broken when it is not, and a miscounted repair hides one. Which of
two duplicate results is kept decides what the model reads. The warm check (`run` with the
builder's memory) must reach the answer a fresh check does, whatever was appended.
"""

from __future__ import annotations

from agent.context.facts import facts_of
from agent.context.passes import orphans
from agent.context.state import PassMemory
from agent.session.models import Message
from tests.context.test_orphans import call, result, shape, user


def reply(text="done"):
    return Message(role="assistant", content=text)


def result_saying(i, text):
    return Message(role="tool", tool_call_id=i, tool_name="t", content=text)


def test_a_valid_list_reports_no_repair_by_any_entry():
    history = [user(), call("1", "2"), result("1"), result("2"), reply(), user("next")]
    out, changed = orphans.apply(history)
    assert changed == 0 and out == history and out is not history
    assert orphans.repair(history) == (history, 0)
    facts = facts_of(history)
    out, changed = orphans.run(facts, memory=PassMemory())
    assert out is facts and changed == 0


def test_of_two_results_for_one_call_the_first_is_kept():
    first, second = result_saying("1", "first"), result_saying("1", "second")
    out, changed = orphans.apply([user(), call("1"), first, second])
    assert changed == 1 and out[2] is first and len(out) == 3
    # the later one first in the list: still the first that comes after the call
    out, changed = orphans.apply([user(), call("1"), user("x"), first, second])
    assert changed == 2 and [m.content for m in out if m.role == "tool"] == ["first"]


def test_each_kind_of_repair_counts_once():
    # a result with no call
    assert orphans.apply([user(), result("9")])[1] == 1
    # a call with no result, its text kept
    out, changed = orphans.apply([user(), call("1", text="look"), user("next")])
    assert changed == 1 and shape(out) == [("u", "u"), ("a", (), "look"), ("u", "next")]
    # a call with no result and nothing else: the message goes, counted for its call
    out, changed = orphans.apply([user(), call("1"), user("next")])
    assert changed == 1 and shape(out) == [("u", "u"), ("u", "next")]
    # an empty assistant message (no calls, no text)
    out, changed = orphans.apply([user(), reply("  "), user("next")])
    assert changed == 1 and shape(out) == [("u", "u"), ("u", "next")]
    # a result that came late, moved up behind its call
    out, changed = orphans.apply([user(), call("1"), user("x"), result("1")])
    assert changed == 1 and shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1"), ("u", "x")]


def test_results_are_put_in_the_order_of_their_calls():
    out, changed = orphans.apply([user(), call("1", "2"), result("2"), result("1")])
    assert shape(out) == [("u", "u"), ("a", ("1", "2"), None), ("t", "1"), ("t", "2")]
    assert changed == 2  # both moved


def test_a_partly_answered_call_keeps_the_answered_part():
    original = call("1", "2", text="both")
    out, changed = orphans.apply([user(), original, result("2")])
    assert changed == 1 and shape(out) == [("u", "u"), ("a", ("2",), "both"), ("t", "2")]
    assert out[1] is not original and [tc.id for tc in original.tool_calls] == ["1", "2"]


def test_a_result_before_its_call_is_no_answer():
    out, changed = orphans.apply([user(), result("1"), call("1")])
    assert shape(out) == [("u", "u")] and changed == 2


def test_a_call_id_used_twice_is_answered_once():
    history = [user(), call("1"), result("1"), call("1"), result("1")]
    out, changed = orphans.apply(history)
    assert shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1")] and changed == 2
    # the same with text on the second call: its text stays
    history = [user(), call("1"), result("1"), call("1", text="again"), result("1")]
    out, changed = orphans.apply(history)
    assert shape(out)[-1] == ("a", (), "again") and changed == 2


def test_calls_at_the_very_end_are_not_valid():
    out, changed = orphans.apply([user(), call("1", "2"), result("1")])
    assert changed == 1 and shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1")]


def test_a_result_answering_another_call_is_not_valid():
    out, changed = orphans.apply([user(), call("1"), result("2"), result("1")])
    assert changed == 2 and shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1")]
    out, changed = orphans.apply([user(), call("1"), user("x")])
    assert changed == 1


def test_the_warm_check_remembers_the_valid_list_and_its_answered_calls():
    facts = facts_of([user(), call("1"), result("1")])
    memory = PassMemory()
    assert orphans.run(facts, memory=memory) == (facts, 0)
    assert memory.last == (facts, frozenset({"1"}))
    longer = facts + facts_of([reply(), call("2"), result("2")])
    assert orphans.run(longer, memory=memory) == (longer, 0)
    assert memory.last == (longer, frozenset({"1", "2"}))


def test_the_warm_check_sees_a_call_id_answered_before_the_extension():
    facts = facts_of([user(), call("1"), result("1")])
    memory = PassMemory()
    orphans.run(facts, memory=memory)
    again = facts + facts_of([call("1"), result("1")])
    out, changed = orphans.run(again, memory=memory)
    assert changed == 2 and len(out) == 3
    assert orphans.run(again, memory=PassMemory()) == (out, changed)


def test_the_warm_check_starts_over_for_another_list():
    memory = PassMemory()
    valid = facts_of([user(), call("1"), result("1")])
    orphans.run(valid, memory=memory)
    # the same length, other records: checked from the start
    broken = facts_of([user(), result("1"), call("1")])
    assert orphans.run(broken, memory=memory)[1] == 2
    # shorter than the remembered list
    orphans.run(valid, memory=memory)
    short = facts_of([user(), call("7")])
    assert orphans.run(short, memory=memory)[1] == 1
    # an extension that breaks in its new part
    orphans.run(valid, memory=memory)
    assert orphans.run(valid + facts_of([result("5")]), memory=memory)[1] == 1
    orphans.run(valid, memory=memory)
    assert orphans.run(valid + facts_of([reply(" ")]), memory=memory)[1] == 1
    orphans.run(valid, memory=memory)
    assert orphans.run(valid + facts_of([call("6")]), memory=memory)[1] == 1


def test_repairs_add_up():
    out, changed = orphans.apply([user(), result("9"), reply("  "), call("1"), user("x")])
    assert changed == 3 and shape(out) == [("u", "u"), ("u", "x")]


def test_a_record_repaired_two_ways_gets_two_copies():
    """The copy of a partly answered call is remembered on its record, per set of calls kept:
    the same record in another list, answered otherwise, must not get the first copy."""
    records = facts_of([user(), call("1", "2"), result("1"), result("2")])
    first, _ = orphans.run([records[0], records[1], records[2]], memory=PassMemory())
    second, _ = orphans.run([records[0], records[1], records[3]], memory=PassMemory())
    assert [tc.id for tc in first[1].message.tool_calls] == ["1"]
    assert [tc.id for tc in second[1].message.tool_calls] == ["2"]
    again, _ = orphans.run([records[0], records[1], records[2]], memory=PassMemory())
    assert again[1] is first[1]
