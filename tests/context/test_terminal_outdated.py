"""Pass 3 (terminal_outdated): every example of seed 003, the SPEC §12 decisions, and a
property test for the invariant (only old successful terminal results change)."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.passes import terminal_outdated
from agent.session.models import Message, ToolCall
from agent.settings.schema import ContextSettings

PLACEHOLDER = "此命令返回内容已过时"
TERMINAL = "terminal-execute"
READ = "filesystem-read"
TZ = timezone(timedelta(hours=8))  # the seed's wall-clock times, read in a fixed zone

BUILD_OK = json.dumps({"stdout": "Building project...\nDone in 3.2s", "stderr": "", "exitCode": 0})
MODULE_ERROR = json.dumps({"stdout": "", "stderr": "Error: Cannot find module 'xxx'", "exitCode": 1})


def ms(text: str) -> int:
    """'2026-01-31 01:00:00' or '2026-01-31 00:44:59.999' → ms epoch."""
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S"
    return int(datetime.strptime(text, fmt).replace(tzinfo=TZ).timestamp() * 1000)


def at(clock: str) -> int:
    return ms(f"2026-01-31 {clock}")


def exchange(
    call_id, *, name=TERMINAL, content=BUILD_OK, created_at=None, status="ok", tool_name="same", command="npm run build"
):
    """An assistant call and its result; tool_name="same" copies the call's name."""
    call = Message(
        role="assistant",
        content=None,
        tool_calls=[ToolCall(id=call_id, name=name, arguments=json.dumps({"command": command}))],
        created_at=created_at if created_at is not None else 0,
    )
    result = Message(
        role="tool",
        tool_call_id=call_id,
        tool_name=name if tool_name == "same" else tool_name,
        content=content,
        created_at=created_at if created_at is not None else 0,
        status=status,
    )
    return [call, result]


def imported(content, *, created_at, status="ok", call_id="imp"):
    """A result from an imported session: no tool name and no call to look it up in."""
    return Message(role="tool", tool_call_id=call_id, content=content, created_at=created_at, status=status)


def newer_results(clocks, *, name=READ, prefix="new"):
    """Successful results that fill the recent slots (reads: never replaced themselves)."""
    out = []
    for i, clock in enumerate(clocks):
        content = (
            f"📄 src/f{i}.py (lines 1-1/1)\n1→x"
            if name == READ
            else json.dumps({"stdout": f"ok {i}", "stderr": "", "exitCode": 0})
        )
        out += exchange(f"{prefix}{i}", name=name, content=content, created_at=at(clock))
    return out


FIVE_NEWER = ["01:15:00", "01:16:00", "01:17:00", "01:18:00", "01:19:00"]


def run(history, now, **kwargs):
    """Apply and check the invariants every test needs; return the placeholder positions."""
    before = [m.model_dump() for m in history]
    before_deep = copy.deepcopy(before)
    ids = [id(m) for m in history]
    out, changed = terminal_outdated.apply(history, now_ms=now, **kwargs)
    assert [m.model_dump() for m in history] == before_deep  # input never mutated
    assert [id(m) for m in history] == ids and out is not history
    assert len(out) == len(history)
    placeholder = kwargs.get("placeholder", PLACEHOLDER)
    replaced = []
    for index, (old, new) in enumerate(zip(history, out, strict=False)):
        if new is old:
            continue
        # A replaced message differs only in its content.
        assert new.content == placeholder != old.content
        assert new.model_dump(exclude={"content"}) == old.model_dump(exclude={"content"})
        replaced.append(index)
    assert changed == len(replaced)
    return out, replaced


def position_of(history, call_id):
    return next(i for i, m in enumerate(history) if m.role == "tool" and m.tool_call_id == call_id)


# --- seed 003 §3.1 basic examples -------------------------------------------------------


def test_example_1_old_successful_command_outside_recent_five_is_replaced():
    history = exchange("target", created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    out, replaced = run(history, at("01:20:00"))
    target = position_of(history, "target")
    assert replaced == [target]
    # 【精简后】 content is the placeholder; timestamp and role are kept.
    assert out[target].content == PLACEHOLDER
    assert out[target].created_at == at("01:00:00") and out[target].role == "tool"
    assert out[target].to_api() == {"role": "tool", "tool_call_id": "target", "content": PLACEHOLDER}


def test_example_2_old_successful_command_inside_recent_five_is_kept():
    history = exchange("target", created_at=at("01:00:00")) + newer_results(FIVE_NEWER[:4])
    out, replaced = run(history, at("01:20:00"))
    assert replaced == []
    assert out[position_of(history, "target")].content == BUILD_OK


def test_example_3_old_error_command_is_kept():
    # stderr alone marks the error (status left "ok" on purpose).
    history = exchange("target", content=MODULE_ERROR, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    out, replaced = run(history, at("01:20:00"))
    assert replaced == []
    assert out[position_of(history, "target")].content == MODULE_ERROR


def test_example_4_recent_successful_command_is_kept():
    others = newer_results(["01:31:00", "01:32:00", "01:33:00", "01:34:00"])
    history = exchange("target", created_at=at("01:30:00")) + others
    assert run(history, at("01:35:00"))[1] == []
    # Not because of the recent slots: with none at all it is still too young.
    assert run(history, at("01:35:00"), keep_recent=0)[1] == []


# --- seed 003 §3.2 edge cases -----------------------------------------------------------

EXAMPLE_5 = [  # (rank in the seed's table, clock, tool, successful)
    (1, "01:55:00", READ, True),
    (2, "01:50:00", TERMINAL, True),
    (3, "01:45:00", TERMINAL, True),
    (4, "01:40:00", TERMINAL, False),
    (5, "01:35:00", TERMINAL, True),
    (6, "01:30:00", TERMINAL, True),
    (7, "01:20:00", TERMINAL, True),
    (8, "00:50:00", TERMINAL, True),
    (9, "00:40:00", READ, True),
    (10, "00:30:00", TERMINAL, False),
]


def example_5_history(order):
    history = []
    for rank, clock, tool, ok in order:
        if tool == READ:
            content = f"📄 src/r{rank}.py (lines 1-3/3)\n1→a\n2→b\n3→c"
        elif ok:
            content = json.dumps(
                {"command": f"step {rank}", "stdout": f"step {rank} done", "stderr": "", "exitCode": 0}
            )
        else:
            content = json.dumps({"command": f"step {rank}", "stdout": "", "stderr": "boom", "exitCode": 1})
        history += exchange(
            f"r{rank}", name=tool, content=content, created_at=at(clock), status="ok" if ok else "error"
        )
    return history


@pytest.mark.parametrize("order", ["chronological", "as_listed_newest_first"])
def test_example_5_mixed_ten_results(order):
    rows = list(reversed(EXAMPLE_5)) if order == "chronological" else EXAMPLE_5
    history = example_5_history(rows)
    out, replaced = run(history, at("02:00:00"))
    assert sorted(replaced) == sorted([position_of(history, "r7"), position_of(history, "r8")])
    for rank in range(1, 11):
        message = out[position_of(history, f"r{rank}")]
        original = history[position_of(history, f"r{rank}")]
        if rank in (7, 8):
            assert message.content == PLACEHOLDER
        else:
            assert message is original  # 01:30 (rank 6) kept: the 01:40 error took no slot


def test_example_6_other_tools_are_never_replaced():
    big = "File content: " + "x" * 50_000
    history = exchange("target", name=READ, content=big, created_at=at("00:30:00")) + newer_results(
        ["00:50:00", "00:51:00", "00:52:00", "00:53:00", "00:54:00"]
    )
    out, replaced = run(history, at("01:00:00"))
    assert replaced == []
    assert out[position_of(history, "target")].content == big


FIVE_AT_0059 = ["00:59:00", "00:59:10", "00:59:20", "00:59:30", "00:59:40"]


def test_example_7_one_ms_past_fifteen_minutes_is_replaced():
    history = exchange("target", created_at=at("00:44:59.999")) + newer_results(FIVE_AT_0059)
    now = at("01:00:00.000")
    assert now - at("00:44:59.999") == 15 * 60 * 1000 + 1
    assert run(history, now)[1] == [position_of(history, "target")]


def test_example_8_exactly_fifteen_minutes_is_kept():
    history = exchange("target", created_at=at("00:45:00.000")) + newer_results(FIVE_AT_0059)
    now = at("01:00:00.000")
    assert now - at("00:45:00.000") == 15 * 60 * 1000
    assert run(history, now)[1] == []


def test_example_9_storage_keeps_the_original_and_a_resumed_session_is_replaced_again():
    stored = '{"stdout":"Building project...\\nDone in 3.2s","stderr":"","exitCode":0}'
    history = exchange("target", content=stored, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    snapshot = [m.model_dump_json() for m in history]
    out, replaced = run(history, at("01:20:00"))
    target = position_of(history, "target")
    assert replaced == [target]
    assert out[target].content == PLACEHOLDER and out[target].created_at == at("01:00:00")
    # 会话持久化文件中的记录: the history is untouched, byte for byte.
    assert history[target].content == stored
    assert [m.model_dump_json() for m in history] == snapshot
    # Resume (a round trip through the stored form), send again: replaced again.
    resumed = [Message.model_validate_json(line) for line in snapshot]
    out2, replaced2 = run(resumed, at("01:20:00"))
    assert replaced2 == [target] and out2[target].content == PLACEHOLDER
    assert resumed[target].content == stored


# --- seed 003 §3.3 identification (imported results: content features only) --------------


@pytest.mark.parametrize(
    ("content", "terminal"),
    [
        pytest.param('{"stdout":"hello","stderr":"","exitCode":0}', True, id="all-fields"),
        pytest.param('{"stdout":"Build completed"}', True, id="stdout-only"),
        pytest.param("File content: ...", False, id="file-content"),
        pytest.param('{"path":"/path/to/file"}', False, id="path-json"),
    ],
)
def test_section_3_3_identification_by_content_features(content, terminal):
    history = [imported(content, created_at=at("01:00:00"))] + newer_results(FIVE_NEWER)
    out, replaced = run(history, at("01:20:00"))
    assert replaced == ([0] if terminal else [])


def test_identification_of_the_real_terminal_tool_format():
    # agent/tools/terminal.py writes json.dumps with ", " / ": " separators and a command.
    content = json.dumps({"command": "ls", "stdout": "a\nb\n", "stderr": "", "exitCode": 0}, ensure_ascii=False)
    history = [imported(content, created_at=at("01:00:00"))] + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == [0]


# --- seed 003 §3.4 error identification ---------------------------------------------------


@pytest.mark.parametrize(
    ("content", "status"),
    [
        pytest.param("Error: Command failed with exit code 1", "ok", id="error-prefix"),
        pytest.param("...", "error", id="status-error"),
        pytest.param('{"stdout":"","stderr":"Connection refused","exitCode":1}', "ok", id="stderr-non-empty"),
    ],
)
@pytest.mark.parametrize("named", [True, False], ids=["terminal-execute", "imported"])
def test_section_3_4_errors_are_kept(content, status, named):
    if named:
        history = exchange("target", content=content, status=status, created_at=at("01:00:00"))
    else:
        history = [imported(content, status=status, created_at=at("01:00:00"), call_id="target")]
    history += newer_results(FIVE_NEWER)
    out, replaced = run(history, at("01:20:00"))
    assert replaced == []
    assert out[position_of(history, "target")].content == content


def test_errors_take_no_recent_slot():
    # 4 successes + 3 newer errors: the old success is still the 5th newest success.
    history = exchange("old", created_at=at("01:00:00"))
    history += newer_results(["01:10:00", "01:11:00", "01:12:00", "01:13:00"])
    for i, clock in enumerate(["01:14:00", "01:15:00", "01:16:00"]):
        history += exchange(f"err{i}", content=MODULE_ERROR, status="error", created_at=at(clock))
    assert run(history, at("02:00:00"))[1] == []
    # One more success pushes it out.
    history += newer_results(["01:17:00"], prefix="extra")
    assert run(history, at("02:00:00"))[1] == [position_of(history, "old")]


def test_non_terminal_successes_take_recent_slots():
    # Seed §2.1: the 5 slots go to the newest results of all tools, not only terminal.
    history = exchange("old", created_at=at("01:00:00")) + newer_results(FIVE_NEWER, name=READ)
    assert run(history, at("01:20:00"))[1] == [position_of(history, "old")]
    history = exchange("old", created_at=at("01:00:00")) + newer_results(FIVE_NEWER[:4], name=READ)
    assert run(history, at("01:20:00"))[1] == []


# --- how a result is known to be a terminal result ------------------------------------


def test_tool_name_missing_but_assistant_call_present():
    history = exchange("target", tool_name=None, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == [position_of(history, "target")]


def test_call_name_wins_over_content_features():
    # A read of a JSON file that happens to contain "stdout": is not a terminal result.
    history = exchange("target", name=READ, tool_name=None, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == []


def test_tool_name_wins_over_content_features():
    history = exchange("target", name=READ, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == []


def test_call_found_even_when_it_comes_after_the_result():
    result = Message(role="tool", tool_call_id="late", content="plain text, no features", created_at=at("01:00:00"))
    call = Message(
        role="assistant", tool_calls=[ToolCall(id="late", name=TERMINAL, arguments="{}")], created_at=at("01:00:00")
    )
    history = [result, call] + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == [0]


def test_imported_result_with_only_content_features_is_replaced():
    history = [imported(BUILD_OK, created_at=at("01:00:00"))] + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == [0]


def test_imported_result_with_non_empty_stderr_is_kept():
    history = [imported(MODULE_ERROR, created_at=at("01:00:00"))] + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == []


def test_invalid_json_with_features_is_not_an_error():
    content = '{"stdout":"truncated output...'
    history = exchange("target", content=content, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    assert run(history, at("01:20:00"))[1] == [position_of(history, "target")]


# --- timestamps and ordering (SPEC §12.2, §12.4) ----------------------------------------


@pytest.mark.parametrize("missing", [0, -5])
def test_no_timestamp_is_never_replaced(missing):
    history = exchange("target", created_at=missing) + newer_results(FIVE_NEWER)
    out, replaced = run(history, at("02:00:00"), keep_recent=0)
    assert replaced == []
    assert out[position_of(history, "target")].content == BUILD_OK


def test_no_timestamp_still_takes_a_slot_by_its_position():
    # Last in the history: newest by position, so it takes a slot and the 01:00 result,
    # now 6th newest, is replaced.
    history = exchange("old", created_at=at("01:00:00"))
    history += newer_results(["01:10:00", "01:11:00", "01:12:00", "01:13:00"])
    history += exchange("untimed", created_at=0)
    assert run(history, at("02:00:00"))[1] == [position_of(history, "old")]
    # First in the history: oldest by position, so the 01:00 result keeps its slot.
    history = exchange("untimed", created_at=0) + history[:-2]
    assert run(history, at("02:00:00"))[1] == []


def test_equal_timestamps_are_ordered_by_position():
    history = []
    for i in range(6):
        history += exchange(f"t{i}", created_at=at("01:00:00"))
    assert run(history, at("02:00:00"))[1] == [position_of(history, "t0")]


def test_timestamp_order_beats_position():
    # The oldest result sits last in the list; it is still the one replaced.
    history = newer_results(FIVE_NEWER, name=TERMINAL) + exchange("oldest", created_at=at("01:00:00"))
    assert run(history, at("02:00:00"))[1] == [position_of(history, "oldest")]


# --- parameters -------------------------------------------------------------------------


def test_defaults_match_config():
    defaults = ContextSettings()
    assert terminal_outdated.NAME == "terminal_outdated"
    assert terminal_outdated.KEEP_RECENT_RESULTS == defaults.terminal_keep_recent_results == 5
    assert terminal_outdated.MAX_AGE_MS == defaults.terminal_max_age_ms == 900_000
    assert terminal_outdated.OUTDATED_PLACEHOLDER == defaults.terminal_outdated_placeholder == PLACEHOLDER


def test_custom_keep_recent_max_age_and_placeholder():
    history = []
    for i, clock in enumerate(["01:00:00", "01:01:00", "01:02:00", "01:03:00"]):
        history += exchange(f"t{i}", created_at=at(clock))
    now = at("01:03:30")
    # Defaults: all within 15 minutes.
    assert run(history, now)[1] == []
    # keep 1, older than 60 s: t0..t2 (t2 is 90 s old) go; t3 is the newest.
    out, replaced = run(history, now, keep_recent=1, max_age_ms=60_000, placeholder="[old output]")
    assert replaced == [position_of(history, f"t{i}") for i in range(3)]
    assert all(out[i].content == "[old output]" for i in replaced)
    # keep 0: t3 (30 s old) is still too young.
    assert len(run(history, now, keep_recent=0, max_age_ms=60_000)[1]) == 3
    assert len(run(history, now, keep_recent=0, max_age_ms=29_999)[1]) == 4
    assert run(history, now, keep_recent=10, max_age_ms=0)[1] == []


def test_already_placeholder_is_not_counted():
    history = exchange("target", content=PLACEHOLDER, created_at=at("01:00:00")) + newer_results(FIVE_NEWER)
    out, changed = terminal_outdated.apply(history, now_ms=at("01:20:00"))
    assert changed == 0 and out[position_of(history, "target")] is history[position_of(history, "target")]


def test_empty_and_non_tool_histories():
    assert terminal_outdated.apply([], now_ms=at("01:00:00")) == ([], 0)
    history = [
        Message(role="user", content='{"stdout": "x"}', created_at=at("00:00:00")),
        Message(role="assistant", content='{"stdout": "y"}', created_at=at("00:00:01")),
    ]
    assert run(history, at("02:00:00"), keep_recent=0)[1] == []


def test_deterministic():
    history = example_5_history(list(reversed(EXAMPLE_5)))
    a, na = terminal_outdated.apply(history, now_ms=at("02:00:00"))
    b, nb = terminal_outdated.apply(history, now_ms=at("02:00:00"))
    assert na == nb == 2
    assert [m.model_dump_json() for m in a] == [m.model_dump_json() for m in b]


def test_a_long_history_keeps_only_the_newest_five():
    """20,000 messages: all old, all but the newest 5 replaced. How fast is bench/pipeline.py's
    to measure (the medians of whole builds), not a test's: a bound here flakes under load."""
    history = []
    base = at("00:00:00")
    for i in range(10_000):  # 20,000 messages
        history += exchange(
            f"c{i}", content=json.dumps({"stdout": f"line {i}", "stderr": "", "exitCode": 0}), created_at=base + i * 100
        )
    out, changed = terminal_outdated.apply(history, now_ms=base + 10_000 * 100 + 15 * 60 * 1000)
    # Ages run from 31m40s down to 16m40.1s: all old, all but the newest 5 replaced.
    assert changed == 10_000 - 5
    kept = [m.tool_call_id for m in out if m.role == "tool" and m.content != PLACEHOLDER]
    assert kept == [f"c{i}" for i in range(9_995, 10_000)]


# --- property -----------------------------------------------------------------------------

NOW = at("02:00:00")

result_strategy = st.fixed_dictionaries(
    {
        "name": st.sampled_from([TERMINAL, READ, None]),  # None: imported, no call at all
        "named": st.booleans(),  # does the result carry tool_name itself?
        "content": st.sampled_from(
            [
                BUILD_OK,
                MODULE_ERROR,
                "Error: Command failed with exit code 1",
                "File content: ...",
                '{"stdout":"Build completed"}',
                '{"path":"/path/to/file"}',
                PLACEHOLDER,
                "",
                '{"stdout":"x',
            ]
        ),
        "status": st.sampled_from(["ok", "ok", "error", "interrupted"]),
        "age_ms": st.one_of(st.none(), st.integers(min_value=-60_000, max_value=3 * 60 * 60 * 1000)),
    }
)


def build(specs):
    history = []
    for i, spec in enumerate(specs):
        created = 0 if spec["age_ms"] is None else NOW - spec["age_ms"]
        if spec["name"] is None:
            history.append(imported(spec["content"], created_at=created, status=spec["status"], call_id=f"c{i}"))
        else:
            history += exchange(
                f"c{i}",
                name=spec["name"],
                content=spec["content"],
                created_at=created,
                status=spec["status"],
                tool_name=spec["name"] if spec["named"] else None,
            )
    return history


def classify(message, history):
    """Reference reading of seed 003 §3.3/§3.4 + SPEC: (terminal, successful)."""
    content = message.content or ""
    name = message.tool_name or next(
        (tc.name for m in history for tc in m.tool_calls if tc.id == message.tool_call_id), None
    )
    terminal = name == TERMINAL if name else any(f in content for f in ('"stdout":', '"stderr":', '"exitCode":'))
    if message.status == "error" or content.startswith("Error:"):
        return terminal, False
    if terminal:
        try:
            stderr = json.loads(content).get("stderr")
        except (ValueError, AttributeError):
            stderr = None
        if isinstance(stderr, str) and stderr:
            return terminal, False
    return terminal, True


@hsettings(max_examples=300, deadline=None)
@given(
    st.lists(result_strategy, max_size=20),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=0, max_value=60 * 60 * 1000),
)
def test_property_only_old_successful_terminal_results_change(specs, keep_recent, max_age_ms):
    history = build(specs)
    before = copy.deepcopy([m.model_dump() for m in history])
    out, changed = terminal_outdated.apply(history, now_ms=NOW, keep_recent=keep_recent, max_age_ms=max_age_ms)
    assert [m.model_dump() for m in history] == before
    diffs = [i for i, (a, b) in enumerate(zip(history, out, strict=False)) if a.content != b.content]
    assert changed == len(diffs) and len(out) == len(history)
    for i in diffs:
        original = history[i]
        assert out[i].content == PLACEHOLDER
        assert original.role == "tool" and classify(original, history) == (True, True)
        assert original.created_at > 0 and NOW - original.created_at > max_age_ms
    # At least keep_recent successful results are never replaced.
    successes = [m for m in history if m.role == "tool" and classify(m, history)[1]]
    assert len(successes) - len(diffs) >= min(keep_recent, len(successes))
    # Same input, same output.
    again, _ = terminal_outdated.apply(history, now_ms=NOW, keep_recent=keep_recent, max_age_ms=max_age_ms)
    assert [m.model_dump() for m in again] == [m.model_dump() for m in out]
