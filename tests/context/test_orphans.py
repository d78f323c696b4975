"""Pass 2 (orphans): table tests for each case and property tests for the invariant."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.passes import orphans
from agent.context.pipeline import build_api_messages
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings


def user(text="u"):
    return Message(role="user", content=text)


def call(*ids, text=None):
    return Message(role="assistant", content=text, tool_calls=[ToolCall(id=i, name="t", arguments="{}") for i in ids])


def result(i):
    return Message(role="tool", tool_call_id=i, tool_name="t", content=f"r{i}")


def shape(messages):
    out = []
    for m in messages:
        if m.role == "assistant":
            out.append(("a", tuple(tc.id for tc in m.tool_calls), m.content))
        elif m.role == "tool":
            out.append(("t", m.tool_call_id))
        else:
            out.append((m.role[0], m.content))
    return out


def test_matched_history_is_unchanged():
    history = [user(), call("1"), result("1"), Message(role="assistant", content="done")]
    out, changed = orphans.apply(history)
    assert changed == 0 and shape(out) == shape(history)


def test_empty_list():
    assert orphans.apply([]) == ([], 0)


def test_call_without_result_is_dropped_text_kept():
    out, changed = orphans.apply([user(), call("1", text="let me look"), user("next")])
    assert shape(out) == [("u", "u"), ("a", (), "let me look"), ("u", "next")]
    assert changed == 1


def test_call_without_result_and_no_text_drops_message():
    out, _ = orphans.apply([user(), call("1"), user("next")])
    assert shape(out) == [("u", "u"), ("u", "next")]


def test_one_of_several_calls_unmatched():
    out, changed = orphans.apply([user(), call("1", "2"), result("1")])
    assert shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1")]
    assert changed == 1


def test_result_without_call_is_dropped():
    out, changed = orphans.apply([user(), result("x"), Message(role="assistant", content="hi")])
    assert shape(out) == [("u", "u"), ("a", (), "hi")]
    assert changed == 1


def test_result_separated_from_call_is_moved_behind_it():
    out, changed = orphans.apply([user(), call("1"), user("interjection"), result("1")])
    assert shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1"), ("u", "interjection")]
    assert changed == 1


def test_empty_interrupted_assistant_is_dropped():
    empty = Message(role="assistant", content=None, status="interrupted")
    out, changed = orphans.apply([user(), empty, user("again")])
    assert shape(out) == [("u", "u"), ("u", "again")]
    assert changed == 1


def test_duplicate_results_keep_the_first():
    out, _ = orphans.apply([user(), call("1"), result("1"), result("1")])
    assert shape(out) == [("u", "u"), ("a", ("1",), None), ("t", "1")]


# -- properties ---------------------------------------------------------------------
ids = st.sampled_from(["a", "b", "c", "d"])
message_strategy = st.one_of(
    st.builds(user, st.text(max_size=5)),
    st.builds(
        lambda xs, t: call(*dict.fromkeys(xs), text=t),
        st.lists(ids, max_size=3),
        st.one_of(st.none(), st.text(max_size=3)),
    ),
    st.builds(result, ids),
)


def assert_valid(api: list[dict]) -> None:
    """What providers require: results directly follow their call; every call answered."""
    i = 0
    while i < len(api):
        m = api[i]
        assert m["role"] != "tool", f"tool result without its call right before it at {i}"
        if m["role"] == "assistant" and m.get("tool_calls"):
            want = [tc["id"] for tc in m["tool_calls"]]
            got = [api[j].get("tool_call_id") for j in range(i + 1, min(len(api), i + 1 + len(want)))]
            assert got == want
            i += 1 + len(want)
            continue
        if m["role"] == "assistant":
            assert m.get("content"), "empty assistant message"
        i += 1


@hsettings(max_examples=300, deadline=None)
@given(st.lists(message_strategy, max_size=25))
def test_pipeline_output_is_always_valid_and_pure(history):
    before = copy.deepcopy([m.model_dump() for m in history])
    settings = Settings()
    first = build_api_messages(history, now_ms=0, settings=settings)
    second = build_api_messages(history, now_ms=0, settings=settings)
    assert [m.model_dump() for m in history] == before  # history untouched
    assert first.messages == second.messages  # deterministic
    assert_valid(first.messages)
    # Nothing valid is lost: every matched user message survives.
    assert sum(m["role"] == "user" for m in first.messages) == sum(m.role == "user" for m in history)
