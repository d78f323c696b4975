"""The budget step end to end (seed 001, SPEC §5): real litellm ↔ fake server, real SQLite.

A scripted session grows past the condense threshold; the loop condenses (the fake answers
the summary request), truncates when the summary request fails, honours `/compact`
instructions, recovers from a provider "context too long" error, and a session condensed
three times still resumes, rewinds and exports every original message.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from agent.context.condense_prompt import SYSTEM_PROMPT
from agent.context.tokens import counter_for
from agent.paths import db_path
from agent.runtime.ops import Compact, Export, Prompt, Rewind
from agent.session.importers.cairn import parse as parse_jsonl
from tests.fakes.llm_script import context_length_exceeded, error, filler_text, text, tool_calls
from tests.loop.conftest import of_type

MODEL = "openai/fake-model"
SUMMARY = "SUMMARY: the user asked for several essays; all were written."
# Window 30,000 with 2,000 reserved for the reply: allowed 25,000, threshold (80%) 24,000.
BUDGET_FLAGS = {
    "models": {MODEL: {"context_window": 30_000, "max_output_tokens": 2_000}},
    "context": {"condense_keep_recent_user_tokens": 6_000, "fallback_max_tokens": 12_000},
}
COUNTER = counter_for("o200k_base")


def is_summary_request(request: dict) -> bool:
    messages = request["messages"]
    return bool(messages) and messages[0]["role"] == "system" and messages[0]["content"] == SYSTEM_PROMPT


def request_tokens(request: dict) -> int:
    return COUNTER.count_messages(request["messages"]) + COUNTER.count_tools(request.get("tools") or [])


def responder(summary_step=None):
    """Answers chat requests with a short reply and summary requests with `summary_step`."""

    def step(request: dict):
        if is_summary_request(request):
            return summary_step if summary_step is not None else text(SUMMARY)
        return text("Done.")

    return step


def essay_prompt(i: int) -> str:
    return f"Essay {i}: " + filler_text(1_800)  # ~2,500 tokens


def chat_requests(server) -> list[dict]:
    return [r for r in server.requests if not is_summary_request(r)]


def summary_requests(server) -> list[dict]:
    return [r for r in server.requests if is_summary_request(r)]


async def test_crossing_the_threshold_condenses_and_the_next_request_fits(server, open_runtime, workspace):
    """Seed 001 §3.4「实现Fresh Start模型，保留关键上下文信息」("a Fresh Start that keeps the key
    context") and §8「优先删除中间段，保留开头和结尾」("delete the middle first, keep the
    beginning and the end"): after an automatic condense the request is the summary and then
    the user's new prompt as its own, final user turn, verbatim (issue 17: it used to be
    `[system, user(summary)]`, the prompt only inside the summary's "Recent user messages")."""
    server.add_forever(responder())  # as many turns as it takes to cross the threshold
    runtime = await open_runtime(flags=BUDGET_FLAGS)
    try:
        for i in range(12):
            await runtime.submit(Prompt(essay_prompt(i)))
            if summary_requests(server):
                break
        budget = runtime.agent.budget
        assert summary_requests(server), "the session crossed the threshold without condensing"
        # The request that was condensed away was over the threshold; the one sent next fits.
        managed = of_type(runtime.events, "context_managed")
        assert [m.event.action for m in managed] == ["condense"]
        event = managed[0].event
        assert event.outcome == "ok" and event.trigger == "auto"
        assert event.tokens_before >= budget.threshold or event.tokens_before > budget.allowed
        assert event.tokens_after < budget.threshold and event.tokens_after < event.tokens_before
        assert of_type(runtime.events, "condense_started")[0].tokens == event.tokens_before
        after = chat_requests(server)[-1]
        assert request_tokens(after) < budget.threshold
        roles = [m["role"] for m in after["messages"]]
        assert roles == ["system", "user", "user"]  # the summary, then the prompt to answer
        assert after["messages"][-1]["content"] == essay_prompt(i)  # verbatim, its own turn
        summary_text = after["messages"][1]["content"]
        assert SUMMARY in summary_text
        # Recent user messages are kept verbatim; the replaced range is archived under a ref.
        assert essay_prompt(i - 1) in summary_text and essay_prompt(i) not in summary_text
        assert "hist-" in summary_text
        refs = await runtime.agent.ctx.context_files.list()
        assert any(r.kind == "history" and r.id in summary_text for r in refs)
        # The summary request held the conversation as text, without tools.
        summary_request = summary_requests(server)[0]
        assert not summary_request.get("tools")
        assert "Essay 0" in "\n".join(m["content"] for m in summary_request["messages"])
        # The next turn is built on the summary: summary + new turn only.
        await runtime.submit(Prompt("And one more short question?"))
        last = chat_requests(server)[-1]
        assert [m["role"] for m in last["messages"]] == ["system", "user", "user", "assistant", "user"]
        assert last["messages"][1]["content"] == summary_text
        assert last["messages"][2]["content"] == essay_prompt(i)
    finally:
        await runtime.close()

    conn = sqlite3.connect(db_path())
    rows = conn.execute("SELECT id, role, kind, meta, content FROM messages ORDER BY seq").fetchall()
    summaries = [r for r in rows if r[2] == "summary"]
    assert len(summaries) == 1
    summary_id, meta = summaries[0][0], json.loads(summaries[0][3])
    assert meta["condensed"]["automatic"] is True and meta["condensed"]["count"] >= 2
    # Nothing was deleted: every essay is still stored, and the originals are marked.
    # The prompt that triggered it is stored again after the summary (meta names the original).
    assert sum(r[1] == "user" and r[2] == "message" and (r[4] or "").startswith("Essay") for r in rows) == i + 2
    at = [r[0] for r in rows].index(summary_id)
    before, again = rows[:at], rows[at + 1]
    assert (again[1], again[2], again[4]) == ("user", "message", essay_prompt(i))
    assert json.loads(again[3])["restated_from"] == before[-1][0] and before[-1][4] == essay_prompt(i)
    assert all(json.loads(r[3] or "{}").get("condensed_by") == summary_id for r in before[:-1])
    assert "condensed_by" not in json.loads(before[-1][3] or "{}")  # not summarised: not dimmed
    events = conn.execute(
        "SELECT action, trigger, outcome, tokens_before, tokens_after, summary_id FROM context_events"
    ).fetchall()
    assert events == [("condense", "auto", "ok", event.tokens_before, event.tokens_after, summary_id)]


async def test_summary_request_failing_falls_back_to_truncation(server, open_runtime, workspace):
    server.add_forever(responder(summary_step=error(400, message="summary model unavailable")))
    runtime = await open_runtime(flags=BUDGET_FLAGS)
    try:
        for i in range(12):
            await runtime.submit(Prompt(essay_prompt(i)))
            if of_type(runtime.events, "context_managed"):
                break
        managed = [m.event for m in of_type(runtime.events, "context_managed")]
        assert [(e.action, e.outcome) for e in managed[:2]] == [("condense", "failed"), ("truncate", "ok")]
        assert "summary model unavailable" in managed[0].error
        truncate = managed[1]
        assert truncate.tokens_after <= 12_000 < truncate.tokens_before
        assert truncate.detail["messages_deleted"] > 0
        sent = chat_requests(server)[-1]
        assert request_tokens(sent) <= 12_000 + 50  # our count of what was sent (priming aside)
        users = [m["content"] for m in sent["messages"] if m["role"] == "user"]
        assert users[0] == essay_prompt(0) and users[-1] == essay_prompt(i)  # first and last kept
        assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    finally:
        await runtime.close()
    conn = sqlite3.connect(db_path())
    # The history itself is untouched: no summary, every message stored.
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE kind = 'summary'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE role = 'user'").fetchone()[0] == i + 1
    assert [r[0] for r in conn.execute("SELECT outcome FROM context_events ORDER BY id")][:2] == ["failed", "ok"]


async def test_truncation_keeps_tool_calls_valid_mid_turn(server, open_runtime, workspace):
    """Condensing off: the tool loop of one turn crosses the budget; every request stays valid."""
    # Each result about 3,900 tokens: the protected end (the last exchange, the first prompt)
    # plus the system prompt and every tool definition stays well under the 12,000 target.
    (workspace / "big.txt").write_text("\n".join(filler_text(60) for _ in range(50)))
    calls = [tool_calls([(f"c{i}", "terminal-execute", {"command": "cat big.txt"})]) for i in range(14)]
    server.add(*calls, text("All read."))
    flags = {
        **BUDGET_FLAGS,
        "context": {**BUDGET_FLAGS["context"], "auto_condense": False, "max_inline_chars": 100_000},
    }
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.submit(Prompt("Read big.txt many times"))
    finally:
        await runtime.close()
    assert not summary_requests(server)
    truncations = [m.event for m in of_type(runtime.events, "context_managed")]
    assert truncations and all(e.action == "truncate" for e in truncations)
    for request in chat_requests(server):
        messages = request["messages"]
        open_calls: set[str] = set()
        for m in messages:
            if m["role"] == "assistant":
                assert not open_calls, "a tool call was left without its result"
                open_calls = {c["id"] for c in m.get("tool_calls") or []}
            elif m["role"] == "tool":
                assert m["tool_call_id"] in open_calls, "a result without its call"
                open_calls.discard(m["tool_call_id"])
        assert messages[1]["content"] == "Read big.txt many times"
    assert request_tokens(chat_requests(server)[-1]) <= 12_000 + 50


async def test_compact_passes_instructions_into_the_summary_request(server, open_runtime, workspace):
    server.add(text("First answer."), text("Second answer."), text(SUMMARY))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("Set up the parser module"))
        await runtime.submit(Prompt("Now add tests for it"))
        await runtime.submit(Compact("focus on X"))
    finally:
        await runtime.close()
    request = summary_requests(server)[0]
    assert any("focus on X" in m["content"] for m in request["messages"])
    managed = of_type(runtime.events, "context_managed")
    assert (
        managed[-1].event.trigger == "manual" and managed[-1].summary.meta["condensed"]["instructions"] == "focus on X"
    )
    assert managed[-1].summary.meta["condensed"]["automatic"] is False
    # A manual condense adds no environment block (seed: only when triggered automatically).
    assert "## Environment" not in managed[-1].summary.content
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


async def test_the_summary_request_goes_through_the_turns_client_settings_and_retries(server, open_runtime):
    server.add(text("First answer."), text("Second answer."), error(503, message="overloaded"), text(SUMMARY))
    runtime = await open_runtime(
        flags={"llm": {"temperature": 0.25, "retry_base_delay": 0.01, "retry_max_delay": 0.05}}
    )
    try:
        await runtime.submit(Prompt("Set up the parser module"))
        await runtime.submit(Prompt("Now add tests for it"))
        await runtime.submit(Compact(None))
    finally:
        await runtime.close()
    first, second = summary_requests(server)
    assert first == second and second["temperature"] == 0.25
    assert [r.attempt for r in of_type(runtime.events, "retrying")] == [1]
    assert of_type(runtime.events, "context_managed")[-1].event.outcome == "ok"


async def test_compact_with_too_few_messages_says_why(server, open_runtime):
    runtime = await open_runtime()
    try:
        await runtime.submit(Compact(None))
    finally:
        await runtime.close()
    assert not server.requests
    assert "Too few messages" in of_type(runtime.events, "turn_error")[-1].message
    assert of_type(runtime.events, "turn_finished")[-1].status == "error"


@pytest.mark.parametrize("llm_client", ["auto", "litellm"])  # the same through both clients
async def test_context_too_long_condenses_and_retries_once(server, open_runtime):
    server.add(text("First answer."), context_length_exceeded(), text(SUMMARY), text("Answer after condensing."))
    runtime = await open_runtime(flags={"context": {"condense_keep_recent_user_tokens": 100}})
    try:
        await runtime.submit(Prompt(essay_prompt(0)))
        await runtime.submit(Prompt("And the deploy step?"))
    finally:
        await runtime.close()
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    managed = of_type(runtime.events, "context_managed")
    assert [(m.event.action, m.event.trigger, m.event.outcome) for m in managed] == [("condense", "overflow", "ok")]
    retried = server.requests[-1]
    # The summary, then the new prompt as the last user turn, verbatim (issue 17).
    assert [m["role"] for m in retried["messages"]] == ["system", "user", "user"]
    assert SUMMARY in retried["messages"][1]["content"]
    assert "And the deploy step?" not in retried["messages"][1]["content"]
    assert retried["messages"][2]["content"] == "And the deploy step?"


@pytest.mark.parametrize("llm_client", ["auto", "litellm"])  # the same through both clients
async def test_context_too_long_twice_is_an_error_not_a_loop(server, open_runtime):
    server.add(text("First answer."), context_length_exceeded(), text(SUMMARY), context_length_exceeded())
    runtime = await open_runtime(flags={"context": {"condense_keep_recent_user_tokens": 100}})
    try:
        await runtime.submit(Prompt(essay_prompt(0)))
        await runtime.submit(Prompt("And the deploy step?"))
    finally:
        await runtime.close()
    assert len(server.requests) == 4
    assert "too long" in of_type(runtime.events, "turn_error")[-1].message
    assert of_type(runtime.events, "turn_finished")[-1].status == "error"


async def test_a_summary_that_does_not_shrink_enough_is_not_condensed_again(server, open_runtime):
    """The kept user message alone is over the threshold: condense once, then truncate, no loop."""
    flags = {
        **BUDGET_FLAGS,
        "context": {
            **BUDGET_FLAGS["context"],
            "condense_keep_recent_user_tokens": 40_000,
            "fallback_max_tokens": 50_000,
        },
    }
    calls = [tool_calls([(f"c{i}", "terminal-execute", {"command": f"echo step {i}"})]) for i in range(4)]
    # 3 essays; then the paste: the summary request, the tool loop (4 calls), the final answer.
    server.add(
        *[responder()] * 3, lambda r: text(SUMMARY) if is_summary_request(r) else calls[0], *calls[1:], responder()
    )
    runtime = await open_runtime(flags=flags)
    try:
        for i in range(3):
            await runtime.submit(Prompt(essay_prompt(i)))
        await runtime.submit(Prompt("Huge paste: " + filler_text(19_000)))
    finally:
        await runtime.close()
    assert len(summary_requests(server)) == 1
    actions = [
        (m.event.action, m.event.outcome, m.event.detail.get("still_over"))
        for m in of_type(runtime.events, "context_managed")
    ]
    assert actions[0] == ("condense", "ok", True)
    assert actions[1][0] == "truncate"
    assert all(a[0] == "truncate" for a in actions[1:])
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


async def test_three_condenses_then_resume_rewind_and_export(server, open_runtime, workspace):
    # 3 rounds of 2 turns and a /compact, then "after resume" and "redo turn 1".
    server.add(*[responder()] * (3 * 3 + 2))
    runtime = await open_runtime()
    turns: list[str] = []
    try:
        for round_ in range(3):
            for j in range(2):
                turns.append(f"round {round_} turn {j}: do step {round_ * 2 + j}")
                await runtime.submit(Prompt(turns[-1]))
            await runtime.submit(Compact(f"round {round_}"))
        session_id = runtime.session.id
    finally:
        await runtime.close()
    assert len(summary_requests(server)) == 3
    # The third summary request builds on the second summary, not on the first range again.
    third = "\n".join(m["content"] for m in summary_requests(server)[2]["messages"])
    assert "round 2 turn 0" in third and "round 0 turn 0" not in third

    resumed = await open_runtime(resume_id=session_id)
    try:
        await resumed.submit(Prompt("after resume"))
        sent = chat_requests(server)[-1]["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "user"]
        assert SUMMARY in sent[1]["content"] and sent[2]["content"] == "after resume"
        # Rewind to the very first turn: before any condense, the originals are back in play.
        points = await resumed.rewind_points()
        first = next(p for p in points if p.text == turns[1])
        outcome = await resumed.submit(Rewind(first.message_id, restore_files=False))
        assert outcome.text == turns[1]
        await resumed.submit(Prompt("redo turn 1"))
        sent = chat_requests(server)[-1]["messages"]
        assert [m["content"] for m in sent if m["role"] == "user"] == [turns[0], "redo turn 1"]
        path = await resumed.submit(Export("jsonl", workspace / "all.jsonl"))
    finally:
        await resumed.close()
    exported = parse_jsonl((workspace / "all.jsonl").read_text())
    contents = [m.content for m in exported.messages]
    for turn in turns:
        assert turn in contents
    assert sum(m.kind == "summary" for m in exported.messages) == 3
    assert path == workspace / "all.jsonl"
