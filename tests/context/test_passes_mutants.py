"""The smaller context passes (agent/context/passes/active_path.py, replace.py, externalize.py),
pinned where mutation testing found them unwatched (issue 36, scripts/mutation.sh).

Pass 1 decides where the request starts (everything a summary replaced is left out), so an
off-by-one there sends the summarised history again or drops the summary itself; its warm
form must agree with a cold run whatever is appended. Pass 5 decides what of a large output
the model sees.
"""

from __future__ import annotations

import json

import pytest

from agent.context.facts import facts_of
from agent.context.files.refs import artifact_ref_id
from agent.context.passes import active_path, externalize
from agent.context.passes.replace import replaced, with_content
from agent.context.state import PassMemory
from agent.session.models import Message


def user(text="u"):
    return Message(role="user", content=text)


def summary(text="s"):
    return Message(role="user", content=text, kind="summary")


# -- pass 1: the newest summary ---------------------------------------------------------------


def test_the_request_starts_at_the_newest_summary():
    history = [user("a"), summary("s1"), user("b"), summary("s2"), user("c")]
    out, changed = active_path.apply(history)
    assert out == history[3:] and changed == 3


def test_no_summary_or_a_summary_first_sends_everything():
    history = [user("a"), user("b")]
    out, changed = active_path.apply(history)
    assert out is history and changed == 0
    first = [summary(), user("b")]
    out, changed = active_path.apply(first)
    assert out is first and changed == 0
    assert active_path.apply([]) == ([], 0)
    only = [user("a"), summary()]
    assert active_path.apply(only) == ([only[1]], 1)


def test_the_warm_run_agrees_with_a_cold_one():
    history = [user("a"), summary("s1"), user("b"), user("c"), summary("s2"), user("d")]
    facts = facts_of(history)
    memory = PassMemory()
    for cut in (1, 2, 3, 4, 5, 6, 6):
        out, changed = active_path.run(facts[:cut], memory=memory)
        cold, cold_changed = active_path.run(facts[:cut], memory=PassMemory())
        assert (out, changed) == (cold, cold_changed), cut
    assert memory.last[1] == 4
    # an extension without a new summary keeps the last one found
    more = facts + facts_of([user("e")])
    assert active_path.run(more, memory=memory) == (more[4:], 4)
    # another list (the same length, other records, or shorter): read from the start
    other = facts_of([user("x"), user("y"), user("z"), summary(), user("w"), user("v")])
    assert active_path.run(other, memory=memory) == (other[3:], 3)
    assert active_path.run(facts[:2], memory=memory) == (facts[1:2], 1)
    # a remembered list without any summary, then one appended
    memory = PassMemory()
    active_path.run(facts[:1], memory=memory)
    assert active_path.run(facts[:3], memory=memory) == (facts[1:3], 1)


# -- copies with new content ----------------------------------------------------------------------


def test_copies_change_the_content_only_and_are_made_once_per_content():
    message = Message(role="tool", tool_call_id="c", tool_name="t", content="long")
    copy = with_content(message, "short")
    assert copy.content == "short" and copy.id == message.id and message.content == "long"
    [record] = facts_of([message])
    first = replaced(record, "placeholder")
    assert first.message.content == "placeholder" and first.message.id == message.id
    assert replaced(record, "placeholder") is first
    assert replaced(record, "other").message.content == "other"


# -- pass 5: large outputs ---------------------------------------------------------------------------


def tool(content, name="terminal-execute", **kw):
    return Message(role="tool", tool_call_id="c", tool_name=name, content=content, **kw)


@pytest.mark.parametrize(
    "text, budget, expected",
    [
        ("a\nb\nc", 100, ("a\nb\nc", 0)),
        ("", 10, ("", 0)),
        # head and tail each get half the budget, counting a newline per line
        ("1\n2\n3\n4\n5\n6\n7\n8", 8, ("1\n2\n[… 4 lines omitted …]\n7\n8", 4)),
        ("11\n22\n33\n44", 6, ("11\n[… 2 lines omitted …]\n44", 2)),
        # a line longer than the half is cut, with a mark on the side it was cut
        ("abcdefghij\nxy\nklmnopqrst", 8, ("abcd …\n[… 1 lines omitted …]\n… qrst", 1)),
        # everything fits in head and tail but the whole is over the budget: the cut lines are kept
        ("abcdefghij\nklmnopqrst", 8, ("abcd …\n… qrst", 0)),
        ("abcdefghij", 4, ("ab …", 0)),
        ("abcdefghij", 1, ("a …", 0)),
        ("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12", 4, ("1\n[… 10 lines omitted …]\n… 12", 10)),
    ],
)
def test_preview_lines(text, budget, expected):
    assert externalize.preview_lines(text, budget) == expected


def test_thousands_are_grouped_in_the_omitted_count():
    text = "\n".join(str(i % 10) for i in range(3000))
    shown, omitted = externalize.preview_lines(text, 8)
    assert omitted == 2996 and "[… 2,996 lines omitted …]" in shown


def test_a_large_plain_output_becomes_a_preview_and_a_ref():
    content = "\n".join(f"line {i}" for i in range(1000))
    message = tool(content, name="filesystem-search")
    ref = artifact_ref_id(message.id)
    shown = externalize.externalized(message, 20)
    assert shown == (
        f"[Output of {len(content):,} characters in 1,000 lines; only its first and last lines are "
        f'shown. Full output in context file "{ref}": use context-grep to search it, context-tail '
        f"for its end, context-read to page through it.]\n"
        f"line 0\n[… 998 lines omitted …]\nline 999"
    )


def test_a_terminal_output_keeps_its_shape():
    stdout = "\n".join(f"out {i}" for i in range(100)) + "\n"
    stderr = "\n".join(f"err {i}" for i in range(10))
    content = json.dumps({"command": "make", "stdout": stdout, "stderr": stderr, "exitCode": 2})
    message = tool(content)
    ref = artifact_ref_id(message.id)
    data = json.loads(externalize.externalized(message, 40))
    assert data["command"] == "make" and data["exitCode"] == 2
    assert data["truncated"] == {
        "stdoutChars": len(stdout),
        "stderrChars": len(stderr),
        "stdoutLines": 100,
        "contextRef": ref,
    }
    assert data["hint"].startswith(f'Full output in context file "{ref}"')
    # stderr gets its share by size, at least a quarter of the budget: 10 characters here
    assert data["stderr"] == externalize.preview_lines(stderr, 10)[0]
    assert data["stdout"] == externalize.preview_lines(stdout, 30)[0]


def test_terminal_stream_budgets():
    # stderr larger than a quarter: its share by size
    stdout, stderr = "o" * 30, "e" * 70
    data = json.loads(externalize.externalized(tool(json.dumps({"stdout": stdout, "stderr": stderr})), 40))
    assert data["stderr"] == externalize.preview_lines(stderr, 28)[0]
    assert data["stdout"] == externalize.preview_lines(stdout, 12)[0]
    assert data["truncated"]["stdoutLines"] == 1
    # no stderr: all of the budget for stdout, and an empty stderr stays empty
    data = json.loads(externalize.externalized(tool(json.dumps({"stdout": "o" * 100, "stderr": ""})), 40))
    assert data["stderr"] == "" and data["stdout"] == externalize.preview_lines("o" * 100, 40)[0]
    # missing streams count as empty
    data = json.loads(externalize.externalized(tool(json.dumps({"command": "x", "exitCode": 0})), 40))
    assert data["stdout"] == "" and data["stderr"] == "" and data["truncated"]["stdoutChars"] == 0
    assert data["truncated"]["stdoutLines"] == 0


@pytest.mark.parametrize(
    "content",
    [
        '{"command": "x", "stdout": 5}',
        '{"command": "x", "stderr": ["e"]}',
        '{"command": "x"',
        '["not", "a", "dict"]',
    ],
)
def test_a_terminal_output_that_is_not_its_json_is_previewed_as_text(content):
    shown = externalize.externalized(tool(content, name="terminal-execute"), 10)
    assert shown.startswith(f"[Output of {len(content):,} characters in 1 lines;")


def test_a_command_result_is_known_by_its_shape_without_a_name():
    content = json.dumps({"command": "x", "stdout": "o" * 100, "stderr": ""})
    shown = externalize.externalized(tool(content, name=None), 20)
    assert json.loads(shown)["truncated"]["stdoutChars"] == 100
    plain = externalize.externalized(tool(" " + content, name=None), 20)
    assert plain.startswith("[Output of ")


def test_the_pass_externalises_long_tool_results_only():
    long = "x" * 50
    history = [
        user(long),
        tool(long),
        tool(long, name="context-read"),
        tool("short"),
        Message(role="assistant", content=long),
    ]
    out, changed = externalize.apply(history, limit=49, preview=10)
    assert changed == 1
    assert [m is h for m, h in zip(out, history, strict=True)] == [True, False, True, True, True]
    assert out[1].content == externalize.externalized(history[1], 10)
    # at the limit: sent whole
    out, changed = externalize.apply(history, limit=50, preview=10)
    assert changed == 0 and out == history
    # a negative limit is no limit below zero: an empty output is never externalised
    out, changed = externalize.apply([tool("")], limit=-5, preview=10)
    assert changed == 0


def test_the_warm_pass_measures_only_the_new_records():
    facts = facts_of([tool("x" * 10)])
    memory = PassMemory()
    assert externalize.run(facts, memory=memory, limit=20, preview=5) == (facts, 0)
    assert memory.last == (facts, 10)
    longer = facts + facts_of([tool("y" * 30)])
    out, changed = externalize.run(longer, memory=memory, limit=20, preview=5)
    assert changed == 1 and out[0] is facts[0] and memory.last == (longer, 30)
    # the same again: the same copy, made once
    again, _ = externalize.run(longer, memory=memory, limit=20, preview=5)
    assert again[1] is out[1]
    # another list: measured whole
    other = facts_of([tool("z" * 30), tool("w")])
    assert externalize.run(other, memory=memory, limit=20, preview=5)[1] == 1
    assert externalize.run(facts, memory=memory, limit=20, preview=5) == (facts, 0)
    shorter_but_long = facts_of([tool("q" * 40)])
    assert externalize.run(shorter_but_long, memory=memory, limit=20, preview=5)[1] == 1


def test_the_warm_run_of_a_shorter_prefix_starts_over():
    history = [user("a"), summary("s1"), user("b"), user("c"), summary("s2"), user("d")]
    facts = facts_of(history)
    memory = PassMemory()
    active_path.run(facts, memory=memory)
    assert active_path.run(facts[:3], memory=memory) == (facts[1:3], 1)


def test_a_text_within_the_budget_comes_back_whole():
    assert externalize.preview_lines("abcdefghij", 10) == ("abcdefghij", 0)
    assert externalize.preview_lines("abcdefghij", 9) == ("abcd …", 0)


def test_every_large_output_gets_its_own_preview():
    first, second = tool("a\n" * 100, name="filesystem-search"), tool("b\n" * 100, name="filesystem-search")
    out, changed = externalize.apply([first, second], limit=50, preview=10)
    assert changed == 2
    assert out[0].content == externalize.externalized(first, 10)
    assert out[1].content == externalize.externalized(second, 10)


def test_previews_follow_the_content_and_the_preview_size():
    memory = PassMemory()
    message = tool("a\n" * 100, name="filesystem-search")
    [record] = facts_of([message])
    small, _ = externalize.run([record], memory=memory, limit=50, preview=10)
    large, _ = externalize.run([record], memory=memory, limit=50, preview=60)
    assert small[0].message.content == externalize.externalized(message, 10)
    assert large[0].message.content == externalize.externalized(message, 60)
    edited = message.model_copy(update={"content": "b\n" * 100})
    again, _ = externalize.run(facts_of([edited]), memory=memory, limit=50, preview=10)
    assert again[0].message.content == externalize.externalized(edited, 10)


def test_a_zero_limit_externalises_any_output_and_non_ascii_stays_readable():
    out, changed = externalize.apply([tool("x", name="filesystem-search")], limit=0, preview=10)
    assert changed == 1
    shown = externalize.externalized(tool(json.dumps({"stdout": "é" * 100, "stderr": ""})), 20)
    assert "é" in shown


def test_an_outgrown_memory_is_not_trusted_for_another_list():
    memory = PassMemory()
    externalize.run(facts_of([tool("x" * 10)]), memory=memory, limit=20, preview=5)
    other = facts_of([tool("z" * 30), tool("w")])
    assert externalize.run(other, memory=memory, limit=20, preview=5)[1] == 1


def test_long_outputs_that_stay_give_back_the_same_list():
    facts = facts_of([tool("x" * 100, name="context-read"), user("y" * 100)])
    out, changed = externalize.run(facts, memory=PassMemory(), limit=20, preview=5)
    assert out is facts and changed == 0


def test_the_smallest_previews():
    shown = json.loads(externalize.externalized(tool(json.dumps({"stdout": "", "stderr": "e"})), 1))
    assert shown["stderr"] == "e" and shown["stdout"] == ""
    empty = tool(None, name="filesystem-search")
    assert externalize.externalized(empty, 10).startswith("[Output of 0 characters in 1 lines;")
    assert externalize.externalized(empty, 10).endswith("]\n")


def test_an_empty_request_has_nothing_to_externalise():
    assert externalize.run([], memory=PassMemory(), limit=5, preview=5) == ([], 0)
    assert externalize.apply([], limit=0, preview=5) == ([], 0)
