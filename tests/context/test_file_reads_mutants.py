"""Pass 4 (agent/context/passes/file_reads.py, seed 000) pinned where mutation testing found it
unwatched (issue 36, scripts/mutation.sh).

The loop's next request is the last one's history plus a few messages, and the pass answers
it from its last run (its `PassMemory`), as the request builder calls it: the records of the
longer history (the same record objects for the same messages), after the terminal pass,
whose placeholders replace earlier terminal results as time moves on. That shortcut must
give what a run from scratch gives, whatever is appended; the property compares the two over
growing sessions. The rest pins edges of the seed's rule: the newest `keep_recent` reads of a
file stay, older successful ones become the placeholder, and what counts as one file.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.facts import Records, facts_of
from agent.context.passes import file_reads, terminal_outdated
from agent.context.passes.replace import replaced
from agent.context.state import PassMemory
from agent.session.models import Message, ToolCall

READ = "filesystem-read"
TERMINAL = "terminal-execute"
PH = file_reads.DEFAULT_PLACEHOLDER
WS = "/home/dev/project"
BASE = 1_800_000_000_000
MINUTE = 60_000
OUTPUT = json.dumps({"stdout": "built", "stderr": "", "exitCode": 0})


# ---------------------------------------------------------------- helpers


def raw_call(call_id: str, arguments: str, *, name: str = READ, created_at: int = BASE) -> Message:
    return Message(
        role="assistant",
        content=None,
        created_at=created_at,
        tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)],
    )


def call(call_id: str, path, *, name: str = READ, created_at: int = BASE) -> Message:
    return raw_call(call_id, json.dumps({"filePath": path}), name=name, created_at=created_at)


def result(call_id: str, content: str | None = None, *, created_at: int = BASE, status: str = "ok") -> Message:
    return Message(
        role="tool",
        tool_call_id=call_id,
        tool_name=READ,
        content=f"📄 file\n1→read by {call_id}" if content is None else content,
        created_at=created_at,
        status=status,
    )


def read(call_id: str, path, created_at: int = BASE, content: str | None = None) -> list[Message]:
    """A read call and its result."""
    return [call(call_id, path, created_at=created_at), result(call_id, content, created_at=created_at)]


def contents(facts) -> list[str | None]:
    return [f.message.content for f in facts]


def cold(messages: list[Message], **kw) -> tuple[list[str | None], int]:
    out, changed = file_reads.run(facts_of(messages), memory=PassMemory(), **kw)
    return contents(out), changed


class Builds:
    """The pass as the request builder runs it: one session's records and the pass's memory,
    each build a history that may extend the last one."""

    def __init__(self, **params) -> None:
        self.records = Records()
        self.memory = PassMemory()
        self.params = params

    def run(self, history: list[Message]):
        facts = self.records.facts_for(history)
        out, changed = file_reads.run(facts, memory=self.memory, **self.params)
        assert (contents(out), changed) == cold(history, **self.params), len(history)
        if changed == 0:
            assert out is facts  # nothing replaced: the very list that came in
        return out, changed


def grow(messages: list[Message], cuts, **params):
    """Builds of growing prefixes of `messages`, each checked against a cold run; the last output."""
    builds = Builds(**params)
    out, changed = None, 0
    for cut in cuts:
        out, changed = builds.run(messages[:cut])
    return out, changed


def placeholders(out) -> list[int]:
    return [i for i, text in enumerate(contents(out)) if text == PH]


# ---------------------------------------------------------------- warm builds


def test_a_session_reading_one_file_again_and_again():
    """Seed 000 §3.1 example 1 as the loop builds it: one read more per request; the default
    keeps the newest five."""
    messages: list[Message] = []
    for i in range(8):
        messages += read(f"r{i}", "src/a.py", BASE + i * MINUTE)
    builds = Builds(workspace=WS)  # keep_recent left at its default
    for reads in range(1, 9):
        out, changed = builds.run(messages[: 2 * reads])
        assert changed == max(0, reads - 5)
        assert placeholders(out) == [2 * i + 1 for i in range(max(0, reads - 5))]
    # the same history again, and with a message that is no read: nothing new replaced
    assert builds.run(messages) == (out, 3)
    out, changed = builds.run(messages + [Message(role="user", content="next", created_at=BASE + 9 * MINUTE)])
    assert changed == 3 and placeholders(out) == [1, 3, 5]


def test_run_keeps_the_newest_five_by_default():
    messages: list[Message] = []
    for i in range(6):
        messages += read(f"r{i}", "a.py", BASE + i)
    out, changed = file_reads.run(facts_of(messages), memory=PassMemory())
    assert changed == 1 and placeholders(out) == [1]
    out, changed = file_reads.run(facts_of(messages[:10]), memory=PassMemory())
    assert changed == 0


def test_one_file_named_in_different_ways_across_builds():
    messages = read("a1", f"{WS}/src/a.py", BASE) + read("a2", "src//a.py", BASE + 1)
    messages += read("a3", f"{WS}/src/./a.py", BASE + 2) + read("b1", "/elsewhere/src/a.py", BASE + 3)
    out, changed = grow(messages, [2, 4, 6, 8], workspace=WS, keep_recent=1)
    assert changed == 2 and placeholders(out) == [1, 3]
    out, changed = grow(messages, [2, 4, 6, 8], workspace=f"{WS}/", keep_recent=1)
    assert changed == 2 and placeholders(out) == [1, 3]
    out, changed = grow(messages, [2, 4, 6, 8], keep_recent=1)  # no workspace: a1 and a3 are one file
    assert changed == 1 and placeholders(out) == [1]


def test_new_reads_push_out_only_reads_of_their_files():
    messages = read("a1", "a.py", BASE) + read("b1", "b.py", BASE + 1) + read("a2", "./a.py", BASE + 2)
    messages += read("ab", ["a.py", "b.py"], BASE + 3) + read("b2", "b.py", BASE + 4) + read("a3", "a.py", BASE + 5)
    out, changed = grow(messages, range(len(messages) + 1), keep_recent=1)
    # a.py: a1, a2 and the batch are older than a3; b.py: b1 and the batch older than b2
    assert changed == 4 and placeholders(out) == [1, 3, 5, 7]
    out, changed = grow(messages, [2, 4, 8, 12], keep_recent=1)
    assert changed == 4 and placeholders(out) == [1, 3, 5, 7]
    # the batch holds the newest read of b.py until b2 comes
    out, changed = grow(messages, [6, 10], keep_recent=1)
    assert changed == 3 and placeholders(out) == [1, 3, 5]
    out, changed = grow(messages, [4, 8], keep_recent=2)
    assert changed == 1 and placeholders(out) == [1]  # a1, a2 and the batch read a.py


def test_a_batch_is_replaced_only_when_each_of_its_files_has_newer_reads():
    messages = read("ab", ["a.py", "b.py"], BASE)
    messages += read("a1", "a.py", BASE + 1) + read("a2", "a.py", BASE + 2)
    messages += read("b1", "b.py", BASE + 3) + read("b2", "b.py", BASE + 4)
    for cuts in ([2, 6, 10], [2, 4, 6, 8, 10], [10]):
        out, changed = grow(messages, cuts, keep_recent=2)
        assert changed == 1 and placeholders(out) == [1], cuts
    out, changed = grow(messages, [2, 6, 8], keep_recent=2)
    assert changed == 0


def test_reads_appended_out_of_time_order():
    """Imported or merged histories: a read appended later may be older than the kept ones."""
    messages = read("new1", "a.py", BASE + 10) + read("new2", "a.py", BASE + 20)
    messages += read("old", "a.py", BASE + 5)
    out, changed = grow(messages, [4, 6], keep_recent=2)
    assert changed == 1 and placeholders(out) == [5]
    messages += read("newest", "a.py", BASE + 30)
    out, changed = grow(messages, [4, 6, 8], keep_recent=2)
    assert changed == 2 and placeholders(out) == [1, 5]


def test_messages_without_a_time_on_warm_builds():
    """A message without a timestamp takes the time of the one before (SPEC §12.4), across builds too."""
    messages = read("a1", "a.py", BASE + 50)
    messages += read("a2", "a.py", 0) + read("a3", "a.py", 0)
    messages += read("a4", "a.py", BASE + 10)  # older than the untimed reads, taken at +50
    out, changed = grow(messages, [2, 4, 6, 8], keep_recent=2)
    assert changed == 2 and placeholders(out) == [1, 7]
    # the time seen last is kept by a build that adds no read, for the next one
    messages = read("a1", "a.py", BASE + 50) + [Message(role="user", content="go on", created_at=BASE + 60)]
    messages += read("a2", "a.py", 0) + read("a3", "a.py", BASE + 55)
    out, changed = grow(messages, [2, 3, 5, 7], keep_recent=1)
    assert changed == 2 and placeholders(out) == [1, 6]
    untimed = read("u1", "a.py", 0) + read("u2", "a.py", 0) + read("u3", "a.py", 0)
    out, changed = grow(untimed, [2, 4, 6], keep_recent=2)
    assert changed == 1 and placeholders(out) == [1]
    out, changed = grow([Message(role="user", content="hi", created_at=0)] + untimed, [1, 7], keep_recent=1)
    assert changed == 2 and placeholders(out) == [2, 4]


def test_errors_and_failed_reads_take_no_slot_on_warm_builds():
    messages = read("a1", "a.py", BASE)
    messages += [call("e1", "a.py", created_at=BASE + 1), result("e1", "Error: ENOENT", created_at=BASE + 1)]
    messages += [call("e2", "a.py", created_at=BASE + 2), result("e2", "1→x", created_at=BASE + 2, status="error")]
    messages += [call("e3", "a.py", created_at=BASE + 3), result("e3", "", created_at=BASE + 3)]
    messages += [
        call("e4", "a.py", created_at=BASE + 4),
        result("e4", "1→x", created_at=BASE + 4, status="interrupted"),
    ]
    messages += [
        call("e5", ["a.py", "b.py"], created_at=BASE + 5),
        result("e5", "📄 a.py\n1→x\n\nError: b.py: not found", created_at=BASE + 5),
    ]
    messages += [
        call("x", "a.py", name="filesystem-write", created_at=BASE + 6),
        result("x", "ok", created_at=BASE + 6),
    ]
    out, changed = grow(messages, range(0, len(messages) + 1, 2), keep_recent=1)
    assert changed == 0
    messages += read("a2", "a.py", BASE + 7)
    out, changed = grow(messages, range(0, len(messages) + 1, 2), keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]


def test_other_settings_run_from_scratch():
    messages: list[Message] = []
    for i in range(4):
        messages += read(f"r{i}", "a.py", BASE + i)
    facts = facts_of(messages)
    memory = PassMemory()
    assert file_reads.run(facts, memory=memory, keep_recent=1)[1] == 3
    out, changed = file_reads.run(facts, memory=memory, keep_recent=3)
    assert changed == 1 and placeholders(out) == [1]
    out, changed = file_reads.run(facts, memory=memory, keep_recent=3, placeholder="[old]")
    assert changed == 1 and contents(out)[1] == "[old]"
    out, changed = file_reads.run(facts, memory=memory, keep_recent=-2)  # a negative count keeps nothing
    assert changed == 4 and placeholders(out) == [1, 3, 5, 7]
    out, changed = file_reads.run(facts, memory=memory, keep_recent=0)
    assert changed == 4
    # the workspace decides what one file is
    both = read("x1", f"{WS}/a.py", BASE) + read("x2", "a.py", BASE + 1)
    memory = PassMemory()
    assert file_reads.run(facts_of(both), memory=memory, keep_recent=1)[1] == 0
    assert file_reads.run(facts_of(both), memory=memory, keep_recent=1, workspace=WS)[1] == 1
    assert file_reads.run(facts_of(both), memory=memory, keep_recent=1, workspace="/elsewhere")[1] == 0


def test_a_rewound_or_edited_history_runs_from_scratch():
    messages: list[Message] = []
    for i in range(4):
        messages += read(f"r{i}", "a.py", BASE + i)
    builds = Builds(keep_recent=1)
    assert builds.run(messages)[1] == 3
    out, changed = builds.run(messages[:4])  # rewound to the first two reads
    assert changed == 1 and placeholders(out) == [1]
    # another message in place of an earlier one: its records are new
    edited = list(messages)
    edited[7] = result("r3", "Error: gone", created_at=BASE + 3)
    out, changed = builds.run(edited)
    assert changed == 2 and placeholders(out) == [1, 3]
    # the call of the newest read edited to name another file: a.py's newest read is r2
    builds.run(messages[:6])
    builds.run(messages)
    edited = list(messages)
    edited[6] = call("r3", "b.py", created_at=BASE + 3)
    out, changed = builds.run(edited)
    assert changed == 2 and placeholders(out) == [1, 3]
    # a message edited in place (the loop finalising it) is a new record too
    builds.run(messages)
    messages[7].content = "Error: changed on disk"
    out, changed = builds.run(messages)
    assert changed == 2 and placeholders(out) == [1, 3]
    # records of another build of the same messages are not the last run's
    memory = PassMemory()
    file_reads.run(facts_of(messages), memory=memory, keep_recent=1)
    other = facts_of(messages[:6]) + facts_of(messages[6:])
    out, changed = file_reads.run(other, memory=memory, keep_recent=1)
    assert changed == 2 and placeholders(out) == [1, 3]


def test_copies_of_earlier_records():
    """Earlier records may come back as copies with other content (the terminal pass's
    placeholders): a copy of a record that is no read is carried over, a copy of a read
    result is read again."""
    messages = [
        raw_call("t", "{}", name=TERMINAL, created_at=BASE),
        Message(role="tool", tool_call_id="t", tool_name=TERMINAL, content=OUTPUT, created_at=BASE),
    ]
    messages += read("a1", "a.py", BASE + 1) + read("a2", "a.py", BASE + 2)
    facts = facts_of(messages)
    memory = PassMemory()
    out, changed = file_reads.run(facts, memory=memory, keep_recent=1)
    assert changed == 1 and placeholders(out) == [3]
    # the terminal result became a placeholder; the read replaced last time stays replaced
    copied = list(facts)
    copied[1] = replaced(facts[1], "[terminal output gone]")
    out, changed = file_reads.run(copied, memory=memory, keep_recent=1)
    assert changed == 1 and contents(out)[1] == "[terminal output gone]" and placeholders(out) == [3]
    assert out[1] is copied[1] and out[5] is facts[5]
    # and with more records after it
    longer = copied + facts_of(read("a3", "a.py", BASE + 3))
    out, changed = file_reads.run(longer, memory=memory, keep_recent=1)
    assert changed == 2 and contents(out)[1] == "[terminal output gone]" and placeholders(out) == [3, 5]
    assert contents(out)[7] == contents(longer)[7]
    # a copy of a read result: the newest read failed after all, the one before it is the newest
    for first in (6, 4):  # a2 read in the first run, or in the warm one after it
        memory = PassMemory()
        file_reads.run(facts[:first], memory=memory, keep_recent=1)
        file_reads.run(facts, memory=memory, keep_recent=1)
        failed = list(facts)
        failed[5] = replaced(facts[5], "Error: the read failed")
        out, changed = file_reads.run(failed, memory=memory, keep_recent=1)
        assert changed == 0 and contents(out) == contents(failed), first


def test_a_later_call_can_own_an_earlier_result():
    """A result whose call is not known yet is no read; once its call comes, it is (seed 000 §2.3)."""
    messages = [
        result("late", "📄 a.py\n1→old", created_at=BASE),
        *read("a1", "a.py", BASE + 1),
        call("late", "a.py", created_at=BASE + 2),
    ]
    out, changed = grow(messages, [1, 3, 4], keep_recent=1)
    assert changed == 1 and placeholders(out) == [0]
    out, changed = grow(messages, [3, 4], keep_recent=1)
    assert changed == 1 and placeholders(out) == [0]
    # the call arrives with other calls in one message
    both = Message(
        role="assistant",
        created_at=BASE + 2,
        tool_calls=[
            ToolCall(id="other", name=READ, arguments="{}"),
            ToolCall(id="late", name=READ, arguments=json.dumps({"filePath": "a.py"})),
        ],
    )
    out, changed = grow(messages[:3] + [both], [3, 4], keep_recent=1)
    assert changed == 1 and placeholders(out) == [0]
    # a result whose call comes in the same build as it, or never
    late_in_build = [
        *read("a0", "a.py", BASE),
        result("c", created_at=BASE + 1),
        call("c", "a.py", created_at=BASE + 2),
    ]
    out, changed = grow(late_in_build, [2, 4], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]
    out, changed = grow(late_in_build, [2, 3], keep_recent=1)
    assert changed == 0


def test_a_reused_call_id_belongs_to_its_latest_call():
    messages = read("same", "a.py", BASE) + [
        raw_call("same", "{}", name=TERMINAL, created_at=BASE + 1),
        Message(role="tool", tool_call_id="same", tool_name=TERMINAL, content=OUTPUT, created_at=BASE + 1),
    ]
    messages += read("same", "a.py", BASE + 2)
    out, changed = grow(messages, [2, 4, 6], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]
    out, changed = grow(messages, [2, 6], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]
    # the reused id named another tool last: that result is no read
    out, changed = grow(messages[:4] + read("x", "a.py", BASE + 3), [2, 4, 6], keep_recent=1)
    assert changed == 1 and contents(out)[3] == OUTPUT


def test_only_tool_results_are_reads():
    messages = read("a1", "a.py", BASE) + [
        Message(role="user", tool_call_id="a1", content="📄 a.py\n1→pasted", created_at=BASE + 1),
        Message(role="tool", tool_call_id=None, tool_name=READ, content="📄 a.py\n1→x", created_at=BASE + 2),
        Message(role="tool", tool_call_id="", tool_name=READ, content="📄 a.py\n1→x", created_at=BASE + 3),
    ]
    out, changed = grow(messages, [2, 5], keep_recent=1)
    assert changed == 0 and contents(out)[2] == "📄 a.py\n1→pasted"
    out, changed = grow(messages, [2, 3], keep_recent=1)  # the user message alone
    assert changed == 0 and contents(out)[2] == "📄 a.py\n1→pasted"
    messages += read("a2", "a.py", BASE + 4)
    out, changed = grow(messages, [2, 5, 7], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]
    # reads after a message that is no result, in one build
    out, changed = grow(messages, [2, 7], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]
    out, changed = grow(messages[:2] + messages[3:], [2, 6], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1]


def test_a_placeholder_in_storage_counts_as_a_read_and_is_not_replaced_again():
    messages = read("a1", "a.py", BASE, content=PH) + read("a2", "a.py", BASE + 1) + read("a3", "a.py", BASE + 2)
    out, changed = grow(messages, [2, 4, 6], keep_recent=1)
    assert changed == 1 and placeholders(out) == [1, 3]
    # a read as long as the placeholder, with other text, is an ordinary read
    same_length = "1→" + "x" * (len("[old]") - 2)
    messages = read("a1", "a.py", BASE, content=same_length) + read("a2", "a.py", BASE + 1)
    assert cold(messages, keep_recent=1, placeholder="[old]") == (
        [None, "[old]", None, contents(facts_of(messages))[3]],
        1,
    )
    assert grow(messages, [2, 4], keep_recent=1, placeholder="[old]")[1] == 1


def test_apply_leaves_its_input_and_its_messages_alone():
    messages = read("a1", "a.py", BASE) + read("a2", "a.py", BASE + 1)
    before = [m.model_dump() for m in messages]
    out, changed = file_reads.apply(messages, keep_recent=1, placeholder="[old]")
    assert changed == 1 and [m.content for m in out][1] == "[old]"
    assert [m.model_dump() for m in messages] == before
    assert out[0] is messages[0] and out[3] is messages[3] and out[1] is not messages[1]
    assert file_reads.apply(messages, keep_recent=1) == (
        out[:1] + [out[1].model_copy(update={"content": PH})] + out[2:],
        1,
    )


# ---------------------------------------------------------------- what one file is


def test_batch_entries_that_name_no_file():
    """A batch naming an entry that cannot be made out is never replaced, even when each of
    its readable files has newer reads."""
    for odd in (7, None, {"path": 5}, {"line": 1}, "", "a\0b"):
        messages = read("b1", ["a.py", odd], BASE) + read("b2", ["a.py", odd], BASE + 1)
        messages += read("a1", "a.py", BASE + 2)
        assert cold(messages, keep_recent=1)[1] == 0, odd
    messages = read("b1", [{"path": "a.py"}, {"path": "b.py"}], BASE) + read("a1", "a.py", BASE + 1)
    messages += read("b2", "b.py", BASE + 2)
    assert cold(messages, keep_recent=1)[1] == 1


def test_a_batch_sent_as_a_json_string():
    messages = read("ab", '  ["a.py", "b.py"]', BASE) + read("a1", "a.py", BASE + 1) + read("b1", "b.py", BASE + 2)
    assert cold(messages, keep_recent=1) == ([None, PH] + contents(facts_of(messages))[2:], 1)
    # not a list after all: a path that starts with a bracket
    messages = read("odd", "[a.py", BASE) + read("odd2", "[a.py", BASE + 1)
    assert cold(messages, keep_recent=1)[1] == 1
    messages = read("odd", '["a.py"', BASE) + read("odd2", '["a.py"', BASE + 1)
    assert cold(messages, keep_recent=1)[1] == 1


def test_arguments_that_name_no_file_are_kept_and_not_counted():
    for arguments in ('{"filePath": 3}', '{"filePath": []}', "[1]", "not json", '{"path": "a.py"}', "{"):
        messages = [raw_call("x", arguments, created_at=BASE), result("x", created_at=BASE)]
        messages += read("a1", "a.py", BASE + 1)
        assert cold(messages, keep_recent=0)[0][1] != PH, arguments
        assert cold(messages, keep_recent=1)[1] == 0, arguments


def test_normalise_path_edges():
    n = file_reads.normalise_path
    assert n("a\0b") is None and n("a\0b", WS) is None
    assert n("/etc/hosts", "/") == "etc/hosts" and n("/", "/") == "."
    assert n("c:\\Work\\a.py") == "C:/Work/a.py" and n("c:/Work/a.py", "C:\\Work") == "a.py"
    # a relative or blank workspace is no workspace
    assert n("project/a.py", "project") == "project/a.py"
    assert n("a.py", "project") == "a.py" and n("../a.py", "project") == "../a.py"
    assert n("a.py", "   ") == "a.py" and n("/w/a.py", "  ") == "/w/a.py"
    assert n("  /w/a.py ", " /w ") == "a.py"
    assert n("/w/a.py", "/w/") == "a.py"


# ---------------------------------------------------------------- property: a warm run is a cold run

FILES = ["a.py", "./a.py", "b.py", f"{WS}/b.py", "c.py"]

step_strategy = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["read", "read", "read", "batch", "error", "terminal", "stray", "call", "user"]),
        "id": st.sampled_from(["r0", "r1", "r2", "r3"]),
        "files": st.lists(st.sampled_from(FILES), min_size=1, max_size=3),
        "minute": st.one_of(st.none(), st.integers(0, 30)),
        "placeholder": st.booleans(),
    }
)


def step_messages(spec, n: int) -> list[Message]:
    created = 0 if spec["minute"] is None else BASE + spec["minute"] * MINUTE
    own = f"c{n}"
    kind = spec["kind"]
    if kind == "read":
        return read(own, spec["files"][0], created, content=PH if spec["placeholder"] else None)
    if kind == "batch":
        return read(own, spec["files"], created)
    if kind == "error":
        return [call(own, spec["files"][0], created_at=created), result(own, "Error: no", created_at=created)]
    if kind == "terminal":
        return [
            raw_call(own, "{}", name=TERMINAL, created_at=created),
            Message(role="tool", tool_call_id=own, tool_name=TERMINAL, content=OUTPUT, created_at=created),
        ]
    if kind == "stray":  # a result whose call may come later (or was a terminal run)
        content = OUTPUT if spec["placeholder"] else None
        return [result(spec["id"], content, created_at=created)]
    if kind == "call":
        return [call(spec["id"], spec["files"][0], created_at=created)]
    return [Message(role="user", content="go on", created_at=created)]


def chain(facts, now: int, terminal_memory: PassMemory, reads_memory: PassMemory, keep: int):
    """The terminal pass, then this one, as the pipeline runs them."""
    current, _ = terminal_outdated.run(facts, memory=terminal_memory, now_ms=now, keep_recent=1)
    return file_reads.run(current, memory=reads_memory, workspace=WS, keep_recent=keep)


@hsettings(max_examples=150, deadline=None)
@given(
    st.lists(step_strategy, min_size=1, max_size=12),
    st.lists(st.integers(0, 30), min_size=1, max_size=5),
    st.lists(st.integers(0, 20), min_size=5, max_size=5),
    st.integers(0, 3),
)
def test_property_a_warm_run_is_a_cold_run(specs, cuts, later, keep):
    messages: list[Message] = []
    for n, spec in enumerate(specs):
        messages += step_messages(spec, n)
    records, terminal_memory, reads_memory = Records(), PassMemory(), PassMemory()
    now = BASE + 30 * MINUTE
    for cut, minutes in zip(sorted(min(c, len(messages)) for c in cuts), later, strict=False):
        now += minutes * MINUTE
        history = messages[:cut]
        facts = records.facts_for(history)
        out, changed = chain(facts, now, terminal_memory, reads_memory, keep)
        fresh, fresh_changed = chain(facts_of(history), now, PassMemory(), PassMemory(), keep)
        assert (contents(out), changed) == (contents(fresh), fresh_changed), cut
        assert changed == contents(out).count(PH) - sum(
            1 for m in history if m.content == PH
        )  # only reads become the placeholder, each once
