"""Pass 4 (file_reads, seed 000): every example of the seed, the SPEC §12 decisions, properties."""

from __future__ import annotations

import copy
import json
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.passes import file_reads
from agent.session.models import Message, ToolCall

PH = "[该文件的历史读取内容已压缩,请参看最新读取结果]"
WS = "/home/dev/project"
READ = "filesystem-read"
BUTTON = "src/components/Button.tsx"


# ---------------------------------------------------------------- helpers


def ms(clock: str) -> int:
    """'02:50:00' on the seed's day (2026-01-31, UTC) as ms epoch."""
    return int(datetime.fromisoformat(f"2026-01-31T{clock}+00:00").timestamp() * 1000)


class History:
    """A session as the loop stores it: each assistant tool call followed by its result."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._n = 0

    def call(self, name, arguments, content, ts, status="ok", call_id=None) -> Message:
        self._n += 1
        cid = call_id or f"call_{self._n}"
        tc = ToolCall(id=cid, name=name, arguments=arguments)
        self.messages.append(Message(role="assistant", tool_calls=[tc], created_at=ts))
        result = Message(role="tool", tool_call_id=cid, tool_name=name, content=content, created_at=ts, status=status)
        self.messages.append(result)
        return result

    def read(self, file_path, ts, content=None, status="ok", **extra) -> Message:
        if content is None:
            shown = file_path if isinstance(file_path, str) else "batch"
            content = f"📄 {shown} (lines 1-2/2)\n1→one\n2→two @{ts}"
        return self.call(READ, json.dumps({"filePath": file_path, **extra}), content, ts, status)

    def ranged(self, path, clock, first, last, total=250) -> Message:
        content = f"📄 {path} (lines {first}-{last}/{total})\n{first}→line {first}"
        return self.read(path, ms(clock), content, startLine=first, endLine=last)

    def error(self, file_path, ts, message="Error: ENOENT: no such file or directory") -> Message:
        return self.read(file_path, ts, content=message, status="error")

    def stray(self, call_id, content="📄 a.py (lines 1-1/1)\n1→x", ts=1) -> Message:
        m = Message(role="tool", tool_call_id=call_id, tool_name=READ, content=content, created_at=ts)
        self.messages.append(m)
        return m


def snapshot(messages: list[Message]) -> list[dict]:
    return copy.deepcopy([m.model_dump() for m in messages])


def dumps(messages: list[Message]) -> list[str]:
    return [m.model_dump_json() for m in messages]


def run(messages: list[Message], **kwargs) -> tuple[list[Message], int]:
    """Apply the pass; check it left its input alone and that a second run changes nothing."""
    kwargs.setdefault("workspace", WS)
    before = snapshot(messages)
    out, replaced = file_reads.apply(messages, **kwargs)
    assert snapshot(messages) == before, "the input was mutated"
    assert out is not messages and len(out) == len(messages)
    again, replaced_again = file_reads.apply(out, **kwargs)
    assert replaced_again == 0 and dumps(again) == dumps(out)
    return out, replaced


def assert_replaced(before, after, replaced, placeholder=PH) -> None:
    """Exactly `replaced` became the placeholder (nothing else of them changed); all else is byte-identical."""
    ids = {m.id for m in replaced}
    assert len(ids) == len(replaced)
    for old, new in zip(before, after, strict=True):
        if old.id in ids:
            assert new.content == placeholder, f"{old.content!r} should be the placeholder"
            assert new.model_dump(exclude={"content"}) == old.model_dump(exclude={"content"})
        else:
            assert new.model_dump_json() == old.model_dump_json(), f"{old.content!r} should be kept"


def check(history: History, replaced: list[Message], **kwargs) -> list[Message]:
    out, count = run(history.messages, **kwargs)
    assert_replaced(history.messages, out, replaced, kwargs.get("placeholder", PH))
    assert count == len(replaced)
    return out


# ---------------------------------------------------------------- seed 000 §3.1


def test_example_1_seven_reads_keep_newest_five():
    h = History()  # oldest first, as they happened; the seed lists them newest first
    r7 = h.ranged(BUTTON, "02:20:00", 150, 200)
    r6 = h.ranged(BUTTON, "02:25:00", 100, 150)
    kept = [
        h.ranged(BUTTON, "02:30:00", 1, 50),
        h.ranged(BUTTON, "02:35:00", 200, 250),
        h.ranged(BUTTON, "02:40:00", 1, 100),
        h.ranged(BUTTON, "02:45:00", 51, 100),
        h.ranged(BUTTON, "02:50:00", 1, 50),
    ]
    out = check(h, [r6, r7])
    ids = {m.id for m in kept}
    assert [m.content for m in out if m.id in ids] == [m.content for m in kept]


def test_example_2_three_reads_all_kept():
    h = History()
    for clock, first, last in [("02:40:00", 1, 50), ("02:45:00", 50, 150), ("02:50:00", 1, 100)]:
        h.ranged("src/utils/helpers.ts", clock, first, last)
    check(h, [])


def test_example_3_error_read_kept_and_not_counted():
    h = History()
    path = "src/config/settings.json"
    r7 = h.ranged(path, "02:20:00", 100, 150)
    r6 = h.ranged(path, "02:25:00", 1, 50)  # the 6th record, but only the 5th successful one
    h.ranged(path, "02:30:00", 200, 250)
    h.ranged(path, "02:35:00", 1, 100)
    r3 = h.error(path, ms("02:40:00"), "Error: File not found")
    h.ranged(path, "02:45:00", 51, 100)
    h.ranged(path, "02:50:00", 1, 50)
    out = check(h, [r7])
    assert out[h.messages.index(r3)].content == "Error: File not found"
    assert out[h.messages.index(r6)].content == r6.content


def test_example_4_several_files_and_other_tools():
    h = History()
    a, b, c, term = "src/App.tsx", BUTTON, "src/utils/api.ts", None
    order = [b, a, b, c, b, term, a, b, b, c, term, b, a, b]
    b_reads = []
    for step, item in enumerate(order):
        ts = ms("02:00:00") + step * 60_000
        if item is term:
            out = {"command": "npm test", "stdout": "ok", "stderr": "", "exitCode": 0}
            h.call("terminal-execute", json.dumps({"command": "npm test"}), json.dumps(out), ts)
        elif item == b:
            b_reads.append(h.read(item, ts))
        else:
            h.read(item, ts)
    assert (order.count(a), order.count(b), order.count(c)) == (3, 7, 2)
    check(h, b_reads[:2])  # A, C and the terminal results untouched


# ---------------------------------------------------------------- seed 000 §3.2 edge cases


def test_example_5_batch_read_counts_once_for_each_file():
    h = History()
    file1 = [h.read("file1.ts", 100 + i) for i in range(5)]
    file2 = [h.read("file2.ts", 200 + i) for i in range(5)]
    for i in range(4):
        h.read("file3.ts", 300 + i)
    h.read(["file1.ts", "file2.ts", "file3.ts"], 400)
    # file1 and file2 now have 6 reads each (the batch is one of them), file3 has 5.
    check(h, [file1[0], file2[0]])


def test_example_6_seed_path_forms_are_one_file():
    h = History()
    forms = [BUTTON, "./" + BUTTON, "F:/Projects/snow-cli/" + BUTTON]
    reads = [h.read(forms[i % 3], ms("02:00:00") + i * 1000) for i in range(7)]
    check(h, reads[:2], workspace="F:/Projects/snow-cli")
    check(h, reads[:2], workspace="F:\\Projects\\snow-cli")  # as Windows writes it


def test_example_6_path_forms_with_a_posix_workspace():
    h = History()
    forms = ["./src/a.py", "src/a.py", "src//a.py", "src\\a.py", f"{WS}/src/a.py", "src/b/../a.py"]
    reads = [h.read(form, 1000 + i) for i, form in enumerate(forms)]
    check(h, reads[:1])


def test_example_7_directory_reads_count_like_files():
    h = History()
    listing = "📁 src/components (2 entries)\nButton.tsx\nInput.tsx"
    reads = [h.read("src/components/" if i % 2 else "src/components", 100 + i, listing) for i in range(7)]
    check(h, reads[:2])


def test_example_8_result_without_tool_call_is_kept_and_not_counted():
    h = History()  # an old session: results survived, their assistant tool_calls did not
    for i in range(3):
        h.stray(f"lost_{i}", f"📄 {BUTTON} (lines 1-50/250)\n1→old {i}", ts=1000 + i)
    h.stray(None, f"📄 {BUTTON} (lines 1-50/250)\n1→no id", ts=1010)
    for i in range(5):
        h.read(BUTTON, 2000 + i)
    check(h, [])  # 4 unidentifiable + exactly 5 identified reads: nothing goes


def test_example_9_empty_null_or_invalid_path_is_kept():
    h = History()
    for i, args in enumerate(
        [
            {"filePath": ""},
            {"filePath": None},
            {"filePath": "   "},
            {},
            {"filePath": []},
            {"filePath": [""]},
            {"filePath": 42},
            {"filePath": [{"startLine": 1}]},
            {"filePath": "a\0b"},
        ]
    ):
        h.call(READ, json.dumps(args), "📄 ? (lines 1-1/1)\n1→x", 100 + i)
    for i in range(5):
        h.read("src/a.py", 200 + i)
    check(h, [])


def test_example_10_storage_keeps_the_original_text():
    h = History()
    original = "📄 src/components/Button.tsx (lines 100-150/250)\n100→export..."
    first = h.read(BUTTON, 1738287900000 - 60_000)
    target = h.read(BUTTON, 1738287900000, original)
    for i in range(5):
        h.read(BUTTON, 1738287900000 + (i + 1) * 60_000)
    out = check(h, [first, target])  # 7 reads, 2 old ones simplified
    sent = out[h.messages.index(target)]
    assert sent.to_api() == {"role": "tool", "tool_call_id": target.tool_call_id, "content": PH}
    assert sent.created_at == 1738287900000
    assert target.content == original  # what the session store holds
    out2, count2 = file_reads.apply(h.messages, workspace=WS)  # sent again after /resume
    assert count2 == 2 and dumps(out2) == dumps(out)


# ---------------------------------------------------------------- seed 000 §2.1, §2.2, §3.3, §3.4


def test_identified_by_its_tool_call_not_by_content():
    h = History()
    look_alike = "📄 src/a.py (lines 1-2/2)\n1→one\n2→two"
    for i, name in enumerate(["terminal-execute", "filesystem-edit", "ace-tools", "filesystem-create"]):
        h.call(name, json.dumps({"filePath": "src/a.py"}), look_alike, 100 + i)
    reads = [h.read("src/a.py", 200 + i) for i in range(6)]
    check(h, reads[:1])


def test_errors_by_prefix_or_status_are_kept_and_not_counted():
    h = History()
    h.error("src/missing.ts", 50, "Error: ENOENT: no such file or directory, open 'src/missing.ts'")
    h.read("src/missing.ts", 51, content="...", status="error")
    h.read("src/missing.ts", 52, content="Error: startLine 900 is past the end of src/missing.ts")
    h.read("src/missing.ts", 53, content="  Error: with leading blanks")
    for i in range(10):
        h.error("src/missing.ts", 60 + i)
    for i in range(5):
        h.read("src/missing.ts", 100 + i)
    check(h, [])  # 14 errors and exactly 5 successful reads: nothing goes


def test_five_reads_nothing_replaced_six_one_replaced_per_file():
    h = History()
    a = [h.read("a.py", 10 + 2 * i) for i in range(5)]
    b = [h.read("b.py", 11 + 2 * i) for i in range(6)]
    check(h, [b[0]])
    a.append(h.read("a.py", 100))
    check(h, [a[0], b[0]])


# ---------------------------------------------------------------- seed 000 §2.4 scenarios


def test_scenario_resume_seven_reads_sent_as_five_storage_keeps_seven():
    stored = History()
    reads = [stored.read(BUTTON, ms("02:20:00") + i * 300_000) for i in range(7)]
    # loadSession gives back the full history; the user sends a new message.
    loaded = [Message.model_validate_json(m.model_dump_json()) for m in stored.messages]
    loaded.append(Message(role="user", content="continue", created_at=ms("03:00:00")))
    api, count = run(loaded)
    assert count == 2
    assert_replaced(loaded, api, loaded[1:4:2])  # the two oldest results
    assert [m.content for m in loaded if m.role == "tool"] == [m.content for m in reads]  # still 7


def test_scenario_rewind_truncated_history_is_simplified_from_scratch():
    h = History()
    reads = [h.read("src/a.py", 1000 + i) for i in range(7)]
    check(h, reads[:2])
    cut = h.messages[: h.messages.index(reads[5]) + 1]  # back to just after the 6th read
    out, count = run(cut)
    assert count == 1
    assert_replaced(cut, out, reads[:1])
    cut = h.messages[: h.messages.index(reads[3]) + 1]  # after the 4th: nothing to simplify
    out, count = run(cut)
    assert count == 0
    assert_replaced(cut, out, [])


def test_scenario_condensed_session_is_still_simplified():
    h = History()
    h.messages.append(Message(role="user", kind="summary", content="Summary of earlier work", created_at=500))
    reads = [h.read("src/a.py", 1000 + i) for i in range(7)]
    check(h, reads[:2])


def test_scenario_condensed_session_with_saved_placeholders():
    # Reads saved already simplified still count as reads but are not counted again.
    h = History()
    saved = [h.read("src/a.py", 100 + i, content=PH) for i in range(2)]
    reads = [h.read("src/a.py", 200 + i) for i in range(6)]
    out, count = run(h.messages)
    assert count == 1
    assert_replaced(h.messages, out, saved + reads[:1])


def test_scenario_every_loop_iteration_simplifies_again():
    h = History()
    reads = []
    for i in range(8):
        reads.append(h.read("src/a.py", 1000 + i))
        check(h, reads[: max(0, len(reads) - 5)])


# ---------------------------------------------------------------- SPEC §12.3 batch reads


def test_batch_holding_the_newest_read_of_one_file_is_kept():
    h = History()
    h.read(["old.py", "new.py"], 100)
    for i in range(5):
        h.read("old.py", 200 + i)
    check(h, [])  # outside old.py's newest 5, but new.py's only read


def test_batch_replaced_when_all_its_files_are_old():
    h = History()
    batch = h.read(["a.py", "b.py"], 100)
    for i in range(5):
        h.read("a.py", 200 + i)
    check(h, [])
    for i in range(5):
        h.read("b.py", 300 + i)
    check(h, [batch])


def test_batch_as_objects_and_as_a_json_string():
    h = History()
    objects = h.read([{"path": "a.py", "startLine": 1, "endLine": 10}, {"path": "./b.py"}], 100)
    as_string = h.read(json.dumps(["a.py", "b.py"]), 101)
    for i in range(5):
        h.read("a.py", 200 + i)
        h.read("b.py", 300 + i)
    check(h, [objects, as_string])


def test_batch_naming_one_file_twice_counts_once():
    h = History()
    singles = [h.read("a.py", 100 + i) for i in range(5)]
    h.read([{"path": "a.py", "startLine": 1, "endLine": 5}, {"path": "./a.py", "startLine": 6}], 200)
    check(h, singles[:1])


def test_batch_with_a_failed_file_is_an_error_read():
    partial = "📄 a.py (lines 1-1/1)\n1→x\n\nError: cannot read gone.py: No such file or directory"
    h = History()
    older = h.read("a.py", 50)
    h.read(["a.py", "gone.py"], 100, content=partial)
    for i in range(5):
        h.read("a.py", 200 + i)
    check(h, [older])  # the batch is kept and took no slot: only `older` is 6th


def test_batch_with_an_unusable_entry_counts_but_is_never_replaced():
    h = History()
    first = h.read("a.py", 50)
    h.read(["a.py", 7], 100, content="📄 a.py (lines 1-1/1)\n1→x")
    for i in range(5):
        h.read("a.py", 200 + i)
    check(h, [first])  # the odd batch counted as a read of a.py, yet stays


# ---------------------------------------------------------------- SPEC §12.4 ordering


def test_order_is_by_timestamp_not_position():
    h = History()  # imported out of order: the last two messages are the oldest reads
    for i in range(5):
        h.read("a.py", 1000 + i)
    oldest = [h.read("a.py", 10 + i) for i in range(2)]
    check(h, oldest)


@pytest.mark.parametrize("ts", [5000, 0], ids=["equal", "missing"])
def test_equal_or_missing_timestamps_ordered_by_position(ts):
    h = History()
    reads = [h.read("a.py", ts) for _ in range(7)]
    check(h, reads[:2])


def test_missing_timestamp_takes_the_time_of_the_message_before_it():
    h = History()
    early = h.read("a.py", 100)
    h.read("a.py", 0)  # happened right after `early`, long before the rest
    for i in range(4):
        h.read("a.py", 1000 + i)
    check(h, [early])


# ---------------------------------------------------------------- identification details


def test_unknown_call_or_unparsable_arguments_kept_and_not_counted():
    h = History()
    for i, args in enumerate(["{not json", "", '["a.py"]', '"a.py"', "[" * 5000 + "]" * 5000]):
        h.call(READ, args, "📄 a.py (lines 1-1/1)\n1→x", 1 + i)
    h.stray("nobody", ts=6)
    for i in range(5):
        h.read("a.py", 100 + i)
    check(h, [])


def test_reused_call_id_belongs_to_the_latest_call():
    h = History()
    first = h.read("a.py", 10)
    # A provider numbering calls per turn reuses "call_0": the second result is a terminal's.
    h.call(READ, json.dumps({"filePath": "a.py"}), "📄 a.py (lines 1-1/1)\n1→x", 20, call_id="call_0")
    h.call("terminal-execute", '{"command": "ls"}', "📄 a.py (lines 1-1/1)\n1→x", 30, call_id="call_0")
    for i in range(4):
        h.read("a.py", 100 + i)
    check(h, [first])  # a.py: 6 reads; the terminal result is not one


def test_result_found_even_when_its_call_comes_later():
    h = History()
    early = h.stray("late", ts=5)
    call = ToolCall(id="late", name=READ, arguments='{"filePath": "a.py"}')
    h.messages.append(Message(role="assistant", tool_calls=[call], created_at=5))
    for i in range(5):
        h.read("a.py", 100 + i)
    check(h, [early])


def test_interrupted_or_empty_results_kept_and_not_counted():
    h = History()
    h.read("a.py", 1, content="📄 a.py (lines 1-1/1)\n1→par", status="interrupted")
    h.read("a.py", 2, content="")
    h.call(READ, json.dumps({"filePath": "a.py"}), None, 3)
    for i in range(5):
        h.read("a.py", 100 + i)
    check(h, [])


def test_paths_outside_the_workspace_stay_absolute():
    h = History()
    forms = ["/etc/hosts", "/etc//hosts", "/etc/x/../hosts", "\\etc\\hosts", "../../../etc/hosts", "/etc/hosts"]
    reads = [h.read(f, 10 + i) for i, f in enumerate(forms)]
    check(h, reads[:1])
    h2 = History()  # not confused with a file of the same name inside the workspace
    for i in range(3):
        h2.read("etc/hosts", 10 + i)
        h2.read("/etc/hosts", 20 + i)
    check(h2, [])


def test_without_workspace_relative_forms_still_merge():
    h = History()
    forms = ["./src/a.py", "src/a.py", "src//a.py", "src\\a.py", "src/./a.py", "src/a.py"]
    reads = [h.read(f, 10 + i) for i, f in enumerate(forms)]
    check(h, reads[:1], workspace=None)


def test_workspace_itself_is_the_dot_directory():
    h = History()
    forms = [".", "./", WS, WS + "/", "", ".", "./."]
    reads = [h.read(f, 10 + i, content="📁 . (3 entries)\na\nb\nc") for i, f in enumerate(forms)]
    check(h, reads[:1])  # "" names nothing (kept, not counted); the other 6 are one directory


def test_normalise_path():
    n = file_reads.normalise_path
    forms = ["./src/a.py", "src/a.py", "src//a.py", "src\\a.py", f"{WS}/src/a.py", f"{WS}//src/./a.py", " src/a.py "]
    assert {n(form, WS) for form in forms} == {"src/a.py"}
    assert n("/elsewhere/a.py", WS) == "/elsewhere/a.py"
    assert n("../other/a.py", WS) == "/home/dev/other/a.py"
    assert n("../other/a.py") == "../other/a.py"
    assert n(WS, WS) == "." and n("src/components/", WS) == "src/components"
    assert n("", WS) is None and n("   ", WS) is None
    assert n("F:\\Projects\\snow-cli\\src\\x.ts", "F:/Projects/snow-cli") == "src/x.ts"
    assert n("f:/Projects/snow-cli/src/x.ts", "F:\\Projects\\snow-cli\\") == "src/x.ts"
    assert n("/w/project-two/a.py", "/w/project") == "/w/project-two/a.py"  # a sibling, not inside


# ---------------------------------------------------------------- options, purity, scale


def test_custom_keep_recent_and_placeholder():
    h = History()
    reads = [h.read("a.py", 10 + i) for i in range(5)]
    check(h, reads[:3], keep_recent=2, placeholder="[old read]")
    check(h, reads, keep_recent=0)
    check(h, [], keep_recent=5)
    check(h, [], keep_recent=50)


def test_input_never_mutated_and_output_deterministic():
    h = History()
    for i in range(13):  # a.py 7 reads, b.py 6
        h.read(["a.py", "b.py"][i % 2], 10 + i)
        h.error("c.py", 100 + i)
    before = snapshot(h.messages)
    out1, n1 = file_reads.apply(h.messages, workspace=WS)
    out2, n2 = file_reads.apply(h.messages, workspace=WS)
    assert snapshot(h.messages) == before
    assert n1 == n2 == 3 and dumps(out1) == dumps(out2)
    assert all(a is b for a, b in zip(out1, h.messages, strict=False) if a.content != PH)


def test_empty_history_and_no_reads():
    assert file_reads.apply([]) == ([], 0)
    msgs = [Message(role="user", content="hi"), Message(role="assistant", content="hello")]
    out, n = file_reads.apply(msgs)
    assert n == 0 and out == msgs and out is not msgs
    assert file_reads.NAME == "file_reads"


def test_twenty_thousand_messages():
    # Linear cost is measured by the benchmarks, not asserted here (AGENTS.md: no durations).
    h = History()
    for i in range(10_000):
        path = f"src/mod_{i % 200}.py"
        h.read(path, 1_000_000 + i, content=f"📄 {path} (lines 1-1/1)\n1→{i}")
    out, count = file_reads.apply(h.messages, workspace=WS)
    assert len(out) == 20_000 and count == 10_000 - 5 * 200
    assert [m.content for m in out[-2 * 1000 :] if m.role == "tool"].count(PH) == 0


# ---------------------------------------------------------------- properties

CANON = {
    "a.py": "a.py",
    "./a.py": "a.py",
    "src/b.py": "src/b.py",
    "src//b.py": "src/b.py",
    f"{WS}/src/b.py": "src/b.py",
    "docs/": "docs",
    "docs": "docs",
}
FILES = list(CANON)

op = st.one_of(
    st.tuples(st.just("read"), st.sampled_from(FILES)),
    st.tuples(st.just("batch"), st.lists(st.sampled_from(FILES), min_size=2, max_size=3)),
    st.tuples(st.sampled_from(["error", "status_error", "terminal", "stray", "bad_args"]), st.sampled_from(FILES)),
)
stamp = st.one_of(st.just(0), st.integers(min_value=1, max_value=40))


def build_ops(ops) -> tuple[History, dict[str, frozenset[str]]]:
    """The history, and for each successful read: the files it read, by canonical name."""
    h = History()
    reads: dict[str, frozenset[str]] = {}
    for (kind, arg), ts in ops:
        if kind in ("read", "batch"):
            files = frozenset([CANON[arg]] if kind == "read" else (CANON[a] for a in arg))
            reads[h.read(arg, ts).id] = files
        elif kind == "error":
            h.error(arg, ts)
        elif kind == "status_error":
            h.read(arg, ts, content="📄 looks fine (lines 1-1/1)\n1→x", status="error")
        elif kind == "terminal":
            h.call("terminal-execute", json.dumps({"filePath": arg}), "📄 x (lines 1-1/1)\n1→x", ts)
        elif kind == "stray":
            h.stray(f"stray{len(h.messages)}", ts=ts)
        else:
            h.call(READ, "{oops", "📄 x (lines 1-1/1)\n1→x", ts)
    return h, reads


def oracle(messages, reads, keep) -> set[str]:
    """Quadratic reference of SPEC §12.3/§12.4: a read goes when each of its files has `keep` newer reads."""
    keys, last = {}, 0
    for position, m in enumerate(messages):
        last = m.created_at if m.created_at > 0 else last
        keys[m.id] = (last, position)
    return {
        rid
        for rid, files in reads.items()
        if all(sum(f in of and keys[o] > keys[rid] for o, of in reads.items()) >= keep for f in files)
    }


@hsettings(max_examples=300, deadline=None)
@given(ops=st.lists(st.tuples(op, stamp), max_size=40), keep=st.integers(min_value=0, max_value=6))
def test_property_only_successful_reads_replaced_and_newest_survive(ops, keep):
    h, reads = build_ops(ops)
    before = snapshot(h.messages)
    out, count = file_reads.apply(h.messages, workspace=WS, keep_recent=keep)
    assert snapshot(h.messages) == before
    replaced = {old.id for old, new in zip(h.messages, out, strict=True) if new.content == PH}
    assert count == len(replaced)
    # Only successful filesystem-read results ever become the placeholder ...
    assert replaced <= set(reads)
    assert_replaced(h.messages, out, [m for m in h.messages if m.id in replaced])
    # ... every file keeps at least min(keep, n) of its n reads, and of its single-file reads
    # too when no batch takes one of its slots (a batch can hold a file's newest reads) ...
    for file in set(CANON.values()):
        of_file = [rid for rid, files in reads.items() if file in files]
        assert sum(rid not in replaced for rid in of_file) >= min(keep, len(of_file))
        singles = [rid for rid in of_file if len(reads[rid]) == 1]
        if len(singles) == len(of_file):
            assert sum(rid not in replaced for rid in singles) >= min(keep, len(singles))
    # ... and exactly the reads SPEC §12.3/§12.4 say go are the ones that went.
    assert replaced == oracle(h.messages, reads, keep)


@hsettings(max_examples=200, deadline=None)
@given(
    ops=st.lists(st.tuples(st.tuples(st.just("read"), st.sampled_from(FILES)), stamp), max_size=30),
    keep=st.integers(min_value=0, max_value=6),
)
def test_property_single_reads_keep_exactly_the_newest_and_are_stable(ops, keep):
    h, reads = build_ops(ops)
    out, _ = run(h.messages, keep_recent=keep)
    replaced = {old.id for old, new in zip(h.messages, out, strict=False) if new.content == PH}
    for file in set(CANON.values()):
        of_file = [rid for rid, files in reads.items() if file in files]
        assert sum(rid not in replaced for rid in of_file) == min(keep, len(of_file))
