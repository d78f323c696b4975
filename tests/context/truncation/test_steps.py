"""Smart truncation step by step (seed 001 §3.2.5), with the seed's defaults and exact numbers."""

from __future__ import annotations

from agent.context.truncation import FALLBACK_MAX_TOKENS, MIDDLE_END, MIDDLE_START
from agent.context.truncation.file_folder import FoldStats, extract_file_paths, fold_file_reads, no_fold
from agent.context.truncation.message_deleter import DeleteStats, centre_out, delete_middle, heuristic_batch
from agent.context.truncation.middle_range import (
    Unit,
    flatten,
    group_units,
    mark_middle,
    middle_range,
    protected_units,
)
from agent.context.truncation.tool_filter import FilterStats, filter_tool_calls
from agent.session.models import ToolCall
from tests.context.truncation import calls, count, read_result, result, say, text, user


def test_seed_defaults():
    assert MIDDLE_START == 1 / 6 and MIDDLE_END == 5 / 6
    assert FALLBACK_MAX_TOKENS == 50_000


def test_count_helper_is_exact():
    assert count(user(10)) == 10 and count(say(100)) == 100 and text(3) == ""


# Step 1 ------------------------------------------------------------------------------------


def test_middle_range_even_messages():
    # total 60: the 1/6 point (10) opens message 1, the 5/6 point (50) opens message 5.
    assert middle_range([10] * 6) == (1, 5)


def test_middle_range_by_tokens_not_by_count():
    # total 600: 1/6 = 100 (start of message 1), 5/6 = 500 lies inside the big last message.
    assert middle_range([100, 10, 10, 10, 10, 460]) == (1, 5)
    # A huge first message holds the 1/6 point itself; the 5/6 point (500) opens message 1.
    assert middle_range([500, 10, 10, 10, 10, 60]) == (0, 1)
    assert middle_range([300, 300]) == (0, 1)


def test_middle_range_skips_empty_messages_and_empty_input():
    assert middle_range([10, 0, 10, 0, 10, 10, 10, 10]) == (2, 7)
    assert middle_range([]) is None and middle_range([0, 0]) is None


def test_middle_range_custom_fractions():
    assert middle_range([10] * 10, 0.5, 0.7) == (5, 7)
    assert middle_range([10] * 4, 0, 1) == (0, 3)


def test_units_keep_calls_with_their_results():
    history = [
        user(),
        calls(("a", "terminal-execute"), ("b", "filesystem-read")),
        result("a"),
        read_result("b", "b.py"),
        say(),
    ]
    units = group_units(history)
    assert [len(u.messages) for u in units] == [1, 3, 1]
    assert flatten(units) == history


def test_protected_units_first_user_last_user_last_unit():
    history = [say(), user(), say(), user(), say(), user(), say()]
    assert protected_units(group_units(history)) == {1, 5, 6}
    assert protected_units([]) == set()


def test_mark_middle_uses_head_position_and_protection():
    history = [user(10), say(10), user(10), say(10), user(10), say(10)]
    units = mark_middle(group_units(history), [count(m) for m in history])
    # range (1, 5); unit 4 is the last user message, unit 5 the last unit.
    assert [u.middle for u in units] == [False, True, True, True, False, False]


# Step 2 ------------------------------------------------------------------------------------


def _middle(history):
    return [Unit(u.messages, True) for u in group_units(history)]


def test_tool_filter_keeps_file_views_and_text():
    mixed = calls(("c1", "terminal-execute"), ("c2", "filesystem-read"), content="let me see")
    only_exec = calls(("c3", "terminal-execute"))
    edit_with_text = calls(("c4", "filesystem-edit"), content="editing")
    history = [
        mixed,
        result("c1"),
        read_result("c2", "c2.py"),
        only_exec,
        result("c3"),
        edit_with_text,
        result("c4", name="filesystem-edit"),
    ]
    stats = FilterStats()
    out = flatten(filter_tool_calls(_middle(history), stats))
    assert [
        (m.role, m.content if m.role != "tool" else m.tool_call_id, [tc.id for tc in m.tool_calls]) for m in out
    ] == [
        ("assistant", "let me see", ["c2"]),
        ("tool", "c2", []),
        ("assistant", "editing", []),
    ]
    assert (stats.calls_removed, stats.results_removed, stats.messages_removed) == (3, 3, 4)
    assert [tc.id for tc in mixed.tool_calls] == ["c1", "c2"]  # the input is not changed


def test_tool_filter_leaves_units_outside_the_middle():
    history = [calls(("c1", "terminal-execute")), result("c1")]
    units = group_units(history)
    assert filter_tool_calls(units) == units


def test_tool_filter_keeps_failed_file_views():
    history = [
        calls(("r", "filesystem-read")),
        result("r", "Error: no such file", name="filesystem-read", status="error"),
    ]
    assert flatten(filter_tool_calls(_middle(history))) == history


# Step 3 ------------------------------------------------------------------------------------


def fake_fold(paths):
    return "".join(f"<system-reminder>{p}: class A, def f</system-reminder>" for p in paths)


def test_extract_file_paths_from_headers_then_arguments():
    assert extract_file_paths(read_result("x", "src/a b.py").content) == ["src/a b.py"]
    batch = read_result("x", "a.py").content + "\n\n" + read_result("y", "b.py").content
    assert extract_file_paths(batch) == ["a.py", "b.py"]
    call = ToolCall(id="x", name="filesystem-read", arguments='{"filePath": ["c.py", {"path": "d.py"}]}')
    assert extract_file_paths("no header", call) == ["c.py", "d.py"]
    assert extract_file_paths("no header", ToolCall(id="x", name="filesystem-read", arguments="{bad")) == []


def test_fold_replaces_the_read_with_the_folded_outline():
    history = [
        calls(("r1", "filesystem-read"), ("r2", "filesystem-read")),
        read_result("r1", "a.py"),
        result("r2", "Error: no such file", name="filesystem-read", status="error"),
    ]
    stats = FoldStats()
    out = flatten(fold_file_reads(_middle(history), fake_fold, stats))
    assert out[1].content == "<system-reminder>a.py: class A, def f</system-reminder>"
    assert out[1].tool_call_id == "r1" and out[1].id == history[1].id
    assert out[2] is history[2]  # errors are not folded
    assert stats.results_folded == 1 and stats.files == ["a.py"]
    assert history[1].content.startswith("📄 a.py")  # the input is not changed


def test_default_fold_keeps_every_read():
    history = [calls(("r1", "filesystem-read")), read_result("r1", "a.py")]
    units = _middle(history)
    assert flatten(fold_file_reads(units, no_fold)) == history


def test_fold_no_shorter_than_the_read_keeps_it():
    history = [calls(("r1", "filesystem-read")), read_result("r1", "a.py", lines=1)]
    out = flatten(fold_file_reads(_middle(history), lambda paths: "z" * 10_000))
    assert out == history


def test_fold_is_called_once_per_distinct_paths_and_folds_all_reads():
    """Seed 001 §3.2.5 步骤3「折叠所有文件查看结果：遍历所有消息，识别所有文件查看的
    tool_result」("fold ALL file-view results: go through all messages, recognise every
    file-view tool_result") and §3.2.3 file-folder.ts「识别所有文件查看的tool_result」
    ("recognise all file-view tool_results"): reads outside the middle 1/6–5/6 range are
    folded too; the units keep their `middle` flag (the range still governs steps 2 and 5)."""
    seen = []

    def fold(paths):
        seen.append(tuple(paths))
        return fake_fold(paths)

    first = [calls(("r1", "filesystem-read")), read_result("r1", "a.py")]
    again = [calls(("r2", "filesystem-read")), read_result("r2", "a.py")]
    tail = [calls(("r3", "filesystem-read")), read_result("r3", "b.py")]
    units = _middle(first) + _middle(again) + group_units(tail)  # the tail is not middle
    stats = FoldStats()
    folded = fold_file_reads(units, fold, stats)
    out = flatten(folded)
    assert seen == [("a.py",), ("b.py",)]
    assert out[1].content == out[3].content == fake_fold(["a.py"])
    assert out[5].content == fake_fold(["b.py"]) and out[5].id == tail[1].id
    assert tail[1].content.startswith("📄 b.py")  # the input is not changed
    assert [u.middle for u in folded] == [True, True, False]
    assert stats.results_folded == 3 and stats.files == ["a.py", "b.py"]


def test_fold_outside_the_middle_leaves_other_tool_results():
    """Seed 001 §3.2.5 步骤2「对于非中间段的消息，保持不变」("messages outside the middle stay
    as they are") still holds for step 2: folding outside the middle touches file views only."""
    history = [
        calls(("e1", "terminal-execute"), ("r1", "filesystem-read")),
        result("e1", "x" * 400),
        read_result("r1", "a.py"),
    ]
    out = flatten(fold_file_reads(group_units(history), fake_fold))
    assert out[0] is history[0] and out[1] is history[1]
    assert out[2].content == fake_fold(["a.py"])


# Step 5 ------------------------------------------------------------------------------------


def test_heuristic_batch_is_excess_over_average():
    assert heuristic_batch(340, 700, 7) == 4  # 340 / 100 = 3.4 → 4
    assert heuristic_batch(300, 700, 7) == 3
    assert heuristic_batch(1, 700, 7) == 1
    assert heuristic_batch(50, 0, 3) == 3  # nothing to average: the whole middle
    assert heuristic_batch(50, 10, 0) == 0


def test_centre_out_order():
    assert centre_out(7) == [3, 2, 4, 1, 5, 0, 6]
    assert centre_out(4) == [1, 2, 0, 3]
    assert centre_out(0) == []


def test_delete_middle_repeats_batches_until_it_fits():
    units = [Unit((say(t),), True) for t in [100, 100, 100, 10, 10, 100, 100]]
    sizes = [100, 100, 100, 10, 10, 100, 100]
    stats = DeleteStats()
    out, total = delete_middle(units, sizes, 520, 400, stats)
    # batch 1: excess 120, average 520/7 → ceil(120·7/520) = 2: the centre (10) and its older
    # neighbour (100) → 410. batch 2: excess 10 → 1 message: the next one out (10) → 400.
    assert total == 400
    assert [u.messages[0] for u in out] == [units[i].messages[0] for i in (0, 1, 5, 6)]
    assert (stats.batches, stats.messages_deleted) == (2, 3)


def test_delete_middle_takes_results_with_their_call():
    call_unit = Unit((calls(("c", "filesystem-read")), read_result("c", "a.py")), True)
    units = [Unit((user(),), False), Unit((say(50),), True), call_unit, Unit((say(50),), True), Unit((user(),), False)]
    sizes = [sum(count(m) for m in u.messages) for u in units]
    stats = DeleteStats()
    out, total = delete_middle(units, sizes, sum(sizes), sum(sizes) - 1, stats)
    assert call_unit not in out and stats.messages_deleted == 2
    assert total == sum(sizes) - sizes[2]


def test_delete_middle_stops_when_the_middle_is_empty():
    units = [Unit((user(),), False), Unit((say(),), True), Unit((say(),), False)]
    out, total = delete_middle(units, [10, 10, 10], 30, 0)
    assert out == [units[0], units[2]] and total == 20
