"""Repeated truncation (truncate_until_fits) and the step details mutation testing found
unwatched (issue 36, scripts/mutation.sh).

One round touches only the middle 1/6–5/6, so a long tool loop inside one turn needs more:
each round works on the last one's output, and the report adds up what every round did
(its first `tokens_before`, its last `tokens_after`). The rounds stop at the target, at
`max_rounds`, or when a round frees nothing.
"""

from __future__ import annotations

import json

from agent.context.truncation import MIDDLE_END, smart_truncate, truncate_until_fits
from agent.context.truncation.file_folder import extract_file_paths, fold_file_reads
from agent.context.truncation.message_deleter import heuristic_batch
from agent.context.truncation.middle_range import Unit, group_units, mark_middle, middle_range
from agent.context.truncation.tool_filter import filter_tool_calls
from agent.session.models import Message, ToolCall
from tests.context.truncation import calls, count, ids, read_result, result, say, user


def tool_loop(exchanges: int, size: int = 400):
    """One user message, then a long run of tool calls (reads and commands) in one turn."""
    history = [user(10, id="task")]
    for i in range(exchanges):
        if i % 3 == 0:
            history += [calls((f"r{i}", "filesystem-read")), read_result(f"r{i}", f"f{i % 2}.py", lines=size // 10)]
        else:
            history += [calls((f"c{i}", "terminal-execute")), result(f"c{i}", "o" * size)]
    return history


def outline(paths: list[str]) -> str:
    return "outline of " + ", ".join(paths)


def rounds(messages, max_rounds=8, **options):
    """The rounds as the contract states them: smart_truncate again on its own output."""
    done = [smart_truncate(messages, **options)]
    while not done[-1].report.reached and len(done) < max_rounds:
        again = smart_truncate(done[-1].messages, **options)
        if again.report.tokens_after >= done[-1].report.tokens_after:
            break
        done.append(again)
    return done


def test_the_rounds_add_up_in_one_report():
    history = tool_loop(100)
    options = {"count": count, "max_tokens": 790, "fold": outline}
    expected = rounds(history, **options)
    assert len(expected) == 3  # the case needs several rounds
    out = truncate_until_fits(history, **options)
    assert out.messages == expected[-1].messages
    r = out.report
    first, last = expected[0].report, expected[-1].report
    assert (r.tokens_before, r.tokens_after, r.reached, r.middle_messages_left, r.target) == (
        first.tokens_before,
        last.tokens_after,
        last.reached,
        last.middle_messages_left,
        790,
    )
    assert r.middle_messages_left == 4  # the last round's: it stopped at the target
    assert r.middle == first.middle
    for field in (
        "orphans_repaired",
        "calls_removed",
        "results_removed",
        "results_folded",
        "messages_deleted",
        "batches",
    ):
        assert getattr(r, field) == sum(getattr(e.report, field) for e in expected), field
    assert r.files_folded == list(dict.fromkeys(f for e in expected for f in e.report.files_folded))


def test_rounds_stop_at_max_rounds():
    history = tool_loop(100)
    options = {"count": count, "max_tokens": 200}
    for max_rounds in (1, 2, 3):
        expected = rounds(history, max_rounds=max_rounds, **options)
        out = truncate_until_fits(history, max_rounds=max_rounds, **options)
        assert len(expected) == max_rounds
        assert out.messages == expected[-1].messages
        assert out.report.batches == sum(e.report.batches for e in expected)


def test_rounds_stop_when_nothing_more_can_go():
    history = tool_loop(12)
    out = truncate_until_fits(history, count=count, max_tokens=0)
    expected = rounds(history, count=count, max_tokens=0)
    assert len(expected) < 8 and out.messages == expected[-1].messages
    assert not out.report.reached and out.report.tokens_after == expected[-1].report.tokens_after
    assert out.messages[0].id == "task" and out.messages[-2:] == history[-2:]


def test_a_target_reached_at_once_is_one_round():
    history = tool_loop(30)
    once = smart_truncate(history, count=count, max_tokens=3_000)
    out = truncate_until_fits(history, count=count, max_tokens=3_000)
    assert once.report.reached and out.messages == once.messages and out.report == once.report


# -- the steps, at their edges -----------------------------------------------------------------


def test_filtered_units_stay_in_the_middle_and_stats_are_optional():
    history = [user(10), calls(("c", "terminal-execute"), content="why"), result("c"), user(10), say(10)]
    units = mark_middle(group_units(history), [10, 100, 100, 10, 10])
    assert [u.middle for u in units] == [False, True, False, False]
    filtered = filter_tool_calls(units)  # no stats asked for
    assert filtered[1].middle is True and filtered[1].messages[0].tool_calls == []


def test_a_custom_middle_end_is_used():
    """With the middle ending at 1/2, only the first half can go."""
    history = [user(10, id="u0")] + [say(100, id=f"m{i}") for i in range(1, 9)] + [user(10, id="u9"), say(10, id="m10")]
    tokens = [count(m) for m in history]
    out = smart_truncate(history, count=count, max_tokens=500, middle_start=0.1, middle_end=0.5)
    assert out.report.middle == middle_range(tokens, 0.1, 0.5) != middle_range(tokens, 0.1, MIDDLE_END)
    assert ids(out.messages) == ["u0", "m5", "m6", "m7", "m8", "u9", "m10"]
    marked = mark_middle(group_units(history), tokens, 0.1, 0.5)
    assert [u.middle for u in marked] == [False] + [True] * 5 + [False] * 5


def test_a_total_at_the_target_deletes_nothing():
    history = [user(10)] + [say(100) for _ in range(6)] + [user(10), say(10)]
    total = sum(count(m) for m in history)
    out = smart_truncate(history, count=count, max_tokens=total)
    assert out.messages == history and out.report.batches == 0 and out.report.reached


def test_batches_and_ranges_at_their_smallest():
    assert heuristic_batch(2, 1, 3) == 6
    assert middle_range([1]) == (0, 0)


def read_call(call_id: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, name="filesystem-read", arguments=arguments)


def test_file_paths_from_the_call_when_the_output_has_none():
    assert extract_file_paths("", read_call("r", json.dumps({"filePath": "a.py"}))) == ["a.py"]
    assert extract_file_paths("", read_call("r", json.dumps({"filePath": ["a.py", "  ", {"path": "b.py"}, 3]}))) == [
        "a.py",
        "b.py",
    ]
    assert extract_file_paths("", read_call("r", json.dumps(["a.py"]))) == []
    assert extract_file_paths("", read_call("r", json.dumps({"other": 1}))) == []
    assert extract_file_paths("", read_call("r", "")) == []


def exchange(content: str, *, name: str = "filesystem-read", status: str = "ok", arguments: str | None = None):
    call = Message(
        role="assistant",
        content=None,
        tool_calls=[ToolCall(id="r", name=name, arguments=arguments or json.dumps({"filePath": "a.py"}))],
    )
    return [Unit((call, Message(role="tool", tool_call_id="r", tool_name=name, content=content, status=status)))]


def folded(units, fold=outline) -> str | None:
    return fold_file_reads(units, fold)[0].messages[1].content


LONG = "x" * 300


def test_only_successful_file_views_are_folded():
    assert folded(exchange(LONG)) == "outline of a.py"  # no header: the call names the file
    assert folded(exchange(LONG, status="interrupted")) == LONG
    for error in ("Error: " + LONG, "  Error: " + LONG):
        assert folded(exchange(error)) == error
    header = "📄 a.py (lines 1-2/2)\n" + LONG
    assert folded(exchange(header, name="terminal-execute", arguments='{"command": "cat a.py"}')) == header
    # nothing names a file: nothing to fold it into
    assert folded(exchange(LONG, arguments='{"other": 1}'), fold=lambda paths: "?") == LONG


def test_a_fold_must_be_shorter_than_the_read():
    same = "y" * len(LONG)
    assert folded(exchange(LONG), fold=lambda paths: same) == LONG
    assert folded(exchange(LONG), fold=lambda paths: same[1:]) == same[1:]
