"""Issue 16, what a provider or the model can try: keep-alive-only streams, duplicated
tool-call ids, error bodies that echo the key. Through both clients (the fast path and
litellm) and the scripted server.

(Signals, `--api-key` in /proc and a broken data folder drive the installed `cairn`:
tests/hostile/test_process_16.py.)
"""

from __future__ import annotations

import pytest

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import hang, text, tool_calls
from tests.hostile.conftest import bounded
from tests.loop.conftest import of_type
from tests.loop.test_provider_faults import assert_readable, assert_well_formed

# llm.stream_idle_timeout in these tests (the default is 60 s): short, yet long enough that a
# loaded machine never makes a healthy response look idle.
IDLE = 2.0


@pytest.fixture(params=["auto", "litellm"])
def llm_client(request) -> str:
    return request.param


def _flags(**llm) -> dict:
    return {
        "llm": {"stream_idle_timeout": IDLE, "max_retries": 0, "retry_base_delay": 0.01, "retry_max_delay": 0.02, **llm}
    }


async def _turns(open_runtime, *prompts, flags=None):
    runtime = await open_runtime(flags=flags)
    try:
        for prompt in prompts:
            await bounded(runtime.submit(Prompt(prompt)), 20)
        return runtime, await runtime.history()
    finally:
        await runtime.close()


# -- 1. keep-alive comments are not progress -------------------------------------------------------


async def test_keepalives_after_some_text_time_out_and_the_partial_is_kept(server, open_runtime):
    # Half an answer, then `: ping` every 50 ms for 30 s: without an idle timeout on content
    # the turn waits the whole 30 s (or, with a real proxy, forever).
    server.add(hang(30, text="Half an answ", keepalive=0.05), text("continued"))
    runtime, history = await _turns(open_runtime, "explain", "go on", flags=_flags())
    (err,) = of_type(runtime.events, "turn_error")
    assert f"sent no content for {IDLE:g} s" in err.message and "What arrived is kept" in err.message
    assert_readable(err.message)
    assert [(m.role, m.status, m.content) for m in history[:2]] == [
        ("user", "ok", "explain"),
        ("assistant", "interrupted", "Half an answ"),
    ]
    assert "sent no content" in history[1].meta["error"]
    assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["error", "ok"]
    second = server.requests[-1]["messages"]
    assert_well_formed(second)
    assert {"role": "assistant", "content": "Half an answ"}.items() <= second[2].items()


async def test_only_keepalives_before_any_chunk_time_out_and_are_retried(server, open_runtime):
    # Headers, then nothing but comments: not even the role delta ever arrives.
    server.add(hang(30, keepalive=0.05, role=False), text("recovered"))
    runtime, history = await _turns(open_runtime, "hi", flags=_flags(max_retries=1))
    (retry,) = of_type(runtime.events, "retrying")
    assert "sent no content" in retry.reason
    assert not of_type(runtime.events, "turn_error")
    assert [(m.role, m.content) for m in history] == [("user", "hi"), ("assistant", "recovered")]
    first, second = server.requests
    assert second["messages"] == first["messages"]


async def test_a_slow_stream_that_keeps_sending_content_is_not_cut(server, open_runtime):
    # ~20 chunks 0.25 s apart: about 5 s in all, well past the idle limit, never idle for long.
    answer = "a slow but steady answer that keeps coming along"
    server.add(text(answer, chunk_size=3, delay=0.25))
    runtime, history = await _turns(open_runtime, "hi", flags=_flags())
    assert not of_type(runtime.events, "turn_error")
    assert history[-1].content == answer and history[-1].status == "ok"


def test_stream_idle_timeout_is_a_setting_with_a_default():
    from agent.settings.config import load_config
    from agent.settings.schema import LLMSettings

    assert LLMSettings().stream_idle_timeout == 60.0
    loaded = load_config(flags={"llm": {"stream_idle_timeout": 5}})
    assert loaded.settings.llm.stream_idle_timeout == 5 and not loaded.warnings
    bad = load_config(flags={"llm": {"stream_idle_timeout": 0}})
    assert bad.settings.llm.stream_idle_timeout == 60.0 and bad.warnings


# -- 5. a tool-call id the model repeats is made unique ---------------------------------------------


def _ids_and_results(messages: list[dict]) -> tuple[list[str], list[tuple[str, str]]]:
    calls = [tc["id"] for m in messages if m["role"] == "assistant" for tc in m.get("tool_calls") or []]
    results = [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"]
    return calls, results


async def test_repeated_tool_call_ids_are_made_unique_in_what_is_stored_and_sent(server, open_runtime):
    ws = open_runtime.workspace
    (ws / "a.txt").write_text("alpha-content\n")
    (ws / "b.txt").write_text("bravo-content\n")
    read = "filesystem-read"
    server.add(
        tool_calls([("dup", read, {"filePath": "a.txt"}), ("dup", read, {"filePath": "b.txt"})]),  # twice in one
        text("Read both."),
        tool_calls([("dup", read, {"filePath": "b.txt"})]),  # an id of an earlier turn, again
        text("Read it again."),
    )
    runtime, history = await _turns(open_runtime, "read a and b", "read b again")
    assert not of_type(runtime.events, "turn_error")

    after_first = server.requests[1]["messages"]
    assert_well_formed(after_first)
    calls, results = _ids_and_results(after_first)
    assert calls == ["dup", "dup_2"]
    assert [r[0] for r in results] == ["dup", "dup_2"]
    assert "alpha-content" in results[0][1] and "bravo-content" in results[1][1]  # each result follows its call

    last = server.requests[3]["messages"]
    assert_well_formed(last)
    calls, results = _ids_and_results(last)
    assert calls == ["dup", "dup_2", "dup_3"] and len(set(calls)) == len(calls)
    assert [r[0] for r in results] == calls
    assert "bravo-content" in results[2][1]

    stored = [
        (m.role, [c.id for c in m.tool_calls], m.tool_call_id) for m in history if m.role in ("assistant", "tool")
    ]
    assert stored == [
        ("assistant", ["dup", "dup_2"], None),
        ("tool", [], "dup"),
        ("tool", [], "dup_2"),
        ("assistant", [], None),
        ("assistant", ["dup_3"], None),
        ("tool", [], "dup_3"),
        ("assistant", [], None),
    ]
    renamed = [m.meta.get("renamed_tool_call_ids") for m in history if m.tool_calls]
    assert renamed == [{"dup_2": "dup"}, {"dup_3": "dup"}]


def test_unique_ids_are_deterministic_and_skip_taken_suffixes():
    from agent.session.models import Message, ToolCall
    from agent.turn.stream_writer import unique_tool_call_ids

    history = [
        Message(role="assistant", tool_calls=[ToolCall(id="x", name="t"), ToolCall(id="x_2", name="t")]),
        Message(role="tool", tool_call_id="x", content="r"),
    ]
    calls = [ToolCall(id="x", name="t"), ToolCall(id="y", name="t"), ToolCall(id="y", name="t")]
    assert unique_tool_call_ids(calls, history) == {"x_3": "x", "y_2": "y"}
    assert [c.id for c in calls] == ["x_3", "y", "y_2"]
