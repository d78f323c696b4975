"""A warm build (records, copies and pass results remembered from earlier builds) gives
exactly what a cold build of the same history gives, whatever happened in between:
appends, rewinds, reloads, in-place edits, a later clock, edits to the returned request."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.facts import Records
from agent.context.passes import file_reads, terminal_outdated
from agent.context.pipeline import build_api_messages
from agent.context.state import BuildState, PassMemory
from agent.context.tokens import TokenCounter
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings
from tests.context.test_pipeline_properties import BASE_MS, TOOLS, histories

SETTINGS = Settings(workspace="/ws")
TIGHT = Settings.model_validate(
    {
        "workspace": "/ws",
        "context": {"terminal_keep_recent_results": 1, "file_keep_recent_reads": 1, "max_inline_chars": 20},
    }
)


# What the warm builds remember, as a session's request builder would keep it (across
# hypothesis examples too: that only makes them warmer).
WARM = BuildState()
COUNTER = TokenCounter("o200k_base")


def build(history: list[Message], now: int, settings: Settings = SETTINGS):
    return build_api_messages(
        history, now_ms=now, settings=settings, tools=TOOLS, system_prompt="sys", state=WARM, counter=COUNTER
    )


def cold(history: list[Message], now: int, settings: Settings = SETTINGS):
    """The same build with nothing remembered, from fresh message objects."""
    return build_api_messages(
        [m.model_copy() for m in history],
        now_ms=now,
        settings=settings,
        tools=TOOLS,
        system_prompt="sys",
        state=BuildState(),
        counter=TokenCounter("o200k_base"),
    )


def same(a, b) -> None:
    assert a.messages == b.messages
    assert a.report == b.report
    assert a.tokens == b.tokens


def edit(message: Message, field: str, draw) -> None:
    """Change one field the pipeline reads, in place, as the loop and the importers do."""
    if field == "content":
        message.content = (message.content or "") + draw(st.sampled_from([" more", "Error: x", ""]))
    elif field == "status":
        message.status = draw(st.sampled_from(["ok", "error", "interrupted"]))
    elif field == "created_at":
        message.created_at = draw(st.sampled_from([0, BASE_MS, BASE_MS + 7_000_000]))
    elif field == "tool_name":
        message.tool_name = draw(st.sampled_from([None, "terminal-execute", "filesystem-read", "context-read"]))
    elif field == "tool_call_id":
        message.tool_call_id = draw(st.sampled_from([None, "c1", "c2"]))
    elif field == "kind":
        message.kind = draw(st.sampled_from(["message", "summary"]))
    elif field == "tool_calls":
        calls = [ToolCall(id="c1", name="terminal-execute", arguments="{}")]
        message.tool_calls = calls if message.role == "assistant" else []


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 7_200_000), st.data())
def test_every_build_equals_a_cold_build(history, offset, data):
    now = BASE_MS + offset
    settings = data.draw(st.sampled_from([SETTINGS, TIGHT]))
    for _ in range(data.draw(st.integers(1, 6))):
        step = data.draw(st.sampled_from(["again", "append", "rewind", "reload", "edit", "later", "spoil"]))
        if step == "append":
            history = history + data.draw(histories())
        elif step == "rewind":
            history = history[: data.draw(st.integers(0, len(history)))]
        elif step == "reload":
            history = [m.model_copy() for m in history]
        elif step == "edit" and history:
            message = data.draw(st.sampled_from(history))
            edit(
                message,
                data.draw(
                    st.sampled_from(
                        ["content", "status", "created_at", "tool_name", "tool_call_id", "kind", "tool_calls"]
                    )
                ),
                data.draw,
            )
        elif step == "later":
            now += data.draw(st.integers(0, 3_600_000))
        warm = build(history, now, settings)
        if step == "spoil":  # a caller edits the request it was given: later builds must not see it
            for sent in warm.messages:
                sent["content"] = "spoiled"
                for call in sent.get("tool_calls") or []:
                    call["id"] = "spoiled"
                    call["function"]["arguments"] = "spoiled"
            warm = build(history, now, settings)
        same(warm, cold(history, now, settings))


def test_an_unchanged_history_gives_back_the_same_records():
    history = [
        Message(role="user", content="hi", created_at=BASE_MS),
        Message(role="assistant", content="hello", created_at=BASE_MS + 1),
    ]
    records = Records()
    first = records.facts_for(history)
    assert records.facts_for(list(history)) is first
    history[1].content = "hello again"
    again = records.facts_for(history)
    assert again is not first and again[0] is first[0] and again[1] is not first[1]
    assert again[1].content == "hello again"


def test_a_long_history_rebuilt_warm_matches_cold():
    history: list[Message] = []
    t = BASE_MS
    for i in range(400):  # more messages than one chunk of the warm check
        t += 60_000
        history.append(Message(role="user", content=f"step {i}", created_at=t))
        call = ToolCall(
            id=f"c{i}",
            name="terminal-execute" if i % 2 else "filesystem-read",
            arguments='{"command": "make"}' if i % 2 else f'{{"filePath": "f{i % 7}.py"}}',
        )
        history.append(Message(role="assistant", tool_calls=[call], created_at=t))
        content = '{"command": "make", "stdout": "ok", "stderr": "", "exitCode": 0}' if i % 2 else f"📄 f.py\n1→{i}"
        history.append(
            Message(role="tool", tool_call_id=call.id, tool_name=call.name, content=content, created_at=t + 10)
        )
    now = t + 60_000
    expected = cold(history, now)
    build(history, now)
    same(build(history, now), expected)
    same(build(history, now + 1), cold(history, now + 1))
    longer = history + [Message(role="user", content="more", created_at=now)]
    build(history, now)
    same(build(longer, now), cold(longer, now))
    # Edited in place far into the history (a later chunk of the warm rebuild's check).
    build(longer, now)
    longer[-5].content = "edited"
    longer[-10].status = "error"
    same(build(longer, now), cold(longer, now))


def test_a_later_call_can_name_an_earlier_result():
    """A result with no name and no call is not a terminal's, until a call with its id comes."""
    at = BASE_MS
    history = [
        Message(role="user", content="go", created_at=at),
        Message(role="tool", tool_call_id="x1", content="plain output", created_at=at + 1),
    ]
    longer = history + [
        Message(role="assistant", tool_calls=[ToolCall(id="x1", name="terminal-execute")], created_at=at + 2)
    ]
    now = at + 7_200_000
    memory, records = PassMemory(), Records()
    terminal_outdated.run(records.facts_of(history), memory=memory, now_ms=now, keep_recent=0)
    warm, warm_changed = terminal_outdated.run(records.facts_of(longer), memory=memory, now_ms=now, keep_recent=0)
    fresh, fresh_changed = terminal_outdated.apply(longer, now_ms=now, keep_recent=0)
    assert [f.message.model_dump() for f in warm] == [m.model_dump() for m in fresh]
    assert warm_changed == fresh_changed == 1


def growing_session(seed: int):
    """The loop's own pattern: each request is the last one's history plus a step, a little later."""
    rng = random.Random(seed)
    history: list[Message] = []
    t = BASE_MS
    for step in range(60):
        t += rng.choice([1_000, 60_000, 400_000])
        kind = "summary" if rng.random() < 0.05 else "message"  # condensed: the request starts there
        history = history + [Message(role="user", content=f"step {step}", kind=kind, created_at=t)]
        calls = []
        for n in range(rng.choice([0, 1, 1, 2])):
            name = rng.choice(["filesystem-read", "filesystem-read", "terminal-execute"])
            path = rng.choice(['"a.py"', '"./b.py"', '["a.py", "b.py"]', '"c.py"', '[{"path": "a.py"}, 3]'])
            arguments = f'{{"filePath": {path}}}' if name == "filesystem-read" else '{"command": "make"}'
            calls.append(ToolCall(id=f"c{step}-{n}", name=name, arguments=arguments))
        if calls:
            history = history + [Message(role="assistant", tool_calls=calls, created_at=t)]
            for call in calls:
                if call.name == "terminal-execute":
                    content = '{"command": "make", "stdout": "ok", "stderr": "", "exitCode": 0}'
                else:
                    content = "Error: no" if rng.random() < 0.3 else "📄 a.py (lines 1-1/1)\n1→x"
                history = history + [
                    Message(
                        role="tool",
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=content,
                        status="error" if content.startswith("Error") else "ok",
                        created_at=t + rng.choice([0, 10]),
                    )
                ]
        yield history, t + 1_000


def test_a_session_growing_step_by_step_builds_like_cold():
    for settings in (SETTINGS, TIGHT):
        for seed in range(3):
            for history, now in growing_session(seed):
                same(build(history, now, settings), cold(history, now, settings))


def test_a_later_call_can_own_an_earlier_read():
    """A read result whose call comes later belongs to it once it comes (seed 000 §2.3)."""
    at = BASE_MS
    read = '{"filePath": "a.py"}'
    history = [
        Message(role="tool", tool_call_id="r1", content="📄 a.py\n1→x", created_at=at),
        Message(
            role="assistant", tool_calls=[ToolCall(id="r2", name="filesystem-read", arguments=read)], created_at=at + 1
        ),
        Message(role="tool", tool_call_id="r2", content="📄 a.py\n1→y", created_at=at + 2),
    ]
    longer = history + [
        Message(
            role="assistant", tool_calls=[ToolCall(id="r1", name="filesystem-read", arguments=read)], created_at=at + 3
        )
    ]
    memory, records = PassMemory(), Records()
    file_reads.run(records.facts_of(history), memory=memory, keep_recent=1)
    warm, warm_changed = file_reads.run(records.facts_of(longer), memory=memory, keep_recent=1)
    fresh, fresh_changed = file_reads.apply(longer, keep_recent=1)
    assert [f.message.model_dump() for f in warm] == [m.model_dump() for m in fresh]
    assert warm_changed == fresh_changed == 1
