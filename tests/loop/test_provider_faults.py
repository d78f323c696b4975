"""Provider faults, one table row each, through both clients (the fast path and litellm)
against the scripted server.

Whatever the fault, three things hold: what streamed is stored (status=interrupted), the
user gets one readable line (never a traceback), and the NEXT request the server receives
is well formed. A failure before any of the answer arrived is retried with bounded backoff
(Retry-After honoured); auth errors are not retried.
"""

from __future__ import annotations

import email.utils
import json
import socket
import time

import pytest

from agent.runtime.ops import Prompt
from agent.settings.schema import LLMSettings
from agent.turn.retry import RetryPolicy
from tests.context.test_orphans import assert_valid
from tests.fakes.llm_server import cut, error, hang, rate_limited, raw, text
from tests.loop.conftest import of_type

ROLES = {"system", "user", "assistant", "tool"}
RETRY_FAST = {"llm": {"max_retries": 2, "retry_base_delay": 0.01, "retry_max_delay": 0.05}}
CALL = ("c1", "terminal-execute", {"command": "echo hello world from a long command line"})


@pytest.fixture(params=["auto", "litellm"])
def llm_client(request) -> str:
    """Every fault here holds through both clients: the fast path (agent/llm/fast.py) and
    litellm, with the same user-visible result."""
    return request.param


def _chunk(delta: dict, finish: str | None = None) -> str:
    return "data: " + json.dumps(
        {
            "id": "chatcmpl-x",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def assert_well_formed(messages: list[dict]) -> None:
    """What any provider accepts: known roles, the system prompt first, every tool call
    answered right after it (and only then), complete JSON arguments, no empty assistant."""
    assert messages and messages[0]["role"] == "system"
    assert all(m["role"] in ROLES for m in messages)
    assert all(m["role"] != "system" for m in messages[1:])
    assert_valid(messages)
    for m in messages:
        for tc in m.get("tool_calls") or []:
            json.loads(tc["function"]["arguments"])  # never a half-sent call
    assert messages[-1]["role"] in ("user", "tool")


def assert_readable(message: str) -> None:
    assert message and "\n" not in message
    assert "Traceback" not in message and "litellm." not in message and "<" not in message[:40]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _turns(open_runtime, *prompts, flags=None, **kwargs):
    runtime = await open_runtime(flags=flags, **kwargs)
    try:
        for prompt in prompts:
            await runtime.submit(Prompt(prompt))
        return runtime, await runtime.history()
    finally:
        await runtime.close()


# -- failures before the answer starts: retried, then the retry succeeds ------------------------

RETRIED = {
    "429 without Retry-After": rate_limited(),
    "429 with Retry-After": rate_limited(retry_after=0),
    "500": error(500),
    "502": error(502),
    "502 with an HTML body": error(502, body="<html><body>Bad gateway</body></html>"),
    "503": error(503),
    "504": error(504),
    "529 overloaded": error(529),
    "malformed SSE line first": raw(["data: {not json", "", "data: [DONE]", ""]),
    "empty body": raw([]),
    "only [DONE]": raw(["data: [DONE]", ""]),
    "neither content nor tool calls": text(""),
    "output limit before any output": text("", finish_reason="length"),
    "cut before the first token": cut(after_chunks=1, text="never seen"),
}


@pytest.mark.parametrize("fault", RETRIED.values(), ids=RETRIED.keys())
async def test_fault_before_the_answer_is_retried(server, open_runtime, fault):
    server.add(fault, text("recovered"))
    runtime, history = await _turns(open_runtime, "hi", flags=RETRY_FAST)
    (retry,) = of_type(runtime.events, "retrying")
    assert retry.attempt == 1 and 0 <= retry.delay <= 0.05
    assert_readable(retry.reason)
    assert not of_type(runtime.events, "turn_error")
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    assert [(m.role, m.status, m.content) for m in history] == [("user", "ok", "hi"), ("assistant", "ok", "recovered")]
    first, second = server.requests
    assert second["messages"] == first["messages"]  # the retry resends the same request
    assert_well_formed(second["messages"])


# -- failures that persist: bounded retries, a readable line, the next turn is valid -------------

GIVE_UP = {
    "429": (rate_limited(), "Rate limited"),
    "500": (error(500), "500"),
    "502": (error(502), "502"),
    "503": (error(503), "503"),
    "malformed SSE": (raw(["data: {not json", "", "data: [DONE]", ""]), "malformed data"),
    "empty response": (text(""), "empty response"),
}


@pytest.mark.parametrize("fault,says", GIVE_UP.values(), ids=GIVE_UP.keys())
async def test_persistent_fault_gives_up_and_the_next_turn_is_valid(server, open_runtime, fault, says):
    server.add(fault, fault, fault, text("back"))
    runtime, history = await _turns(open_runtime, "hi", "again", flags=RETRY_FAST)
    assert len(of_type(runtime.events, "retrying")) == 2  # max_retries, then it gives up
    (err,) = of_type(runtime.events, "turn_error")
    assert says in err.message and "Gave up after 2 retries" in err.message
    assert_readable(err.message)
    assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["error", "ok"]
    assert [m.role for m in history] == ["user", "user", "assistant"]  # nothing half-made stored
    assert len(server.requests) == 4
    assert_well_formed(server.requests[-1]["messages"])
    assert server.requests[-1]["messages"][-1] == {"role": "user", "content": "again"}


# -- backoff: exponential with jitter, bounded, Retry-After honoured ----------------------------


def _policy(**llm) -> RetryPolicy:
    return RetryPolicy(LLMSettings(**llm), emit=lambda event: None)


def test_backoff_is_exponential_with_jitter_and_bounded():
    policy = _policy(retry_base_delay=1.0, retry_max_delay=30.0)
    for attempt in range(1, 12):
        ceiling = min(30.0, 2.0 ** (attempt - 1))
        samples = [policy.backoff(attempt, None) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in samples)
        assert len(set(samples)) > 1  # jitter: clients that failed together do not retry together


def test_retry_after_is_used_as_given_but_capped():
    policy = _policy(retry_base_delay=1.0, retry_max_delay=30.0)
    assert policy.backoff(1, 7.0) == 7.0
    assert policy.backoff(3, 0.0) == 0.0
    assert policy.backoff(1, 3600.0) == 30.0


async def test_loop_backs_off_exponentially_without_retry_after(server, open_runtime):
    server.add(error(503), error(503), rate_limited(), text("done"))
    runtime, _ = await _turns(
        open_runtime, "hi", flags={"llm": {"max_retries": 3, "retry_base_delay": 0.01, "retry_max_delay": 1.0}}
    )
    delays = [r.delay for r in of_type(runtime.events, "retrying")]
    assert len(delays) == 3
    for attempt, delay in enumerate(delays, start=1):
        assert 0.01 * 2 ** (attempt - 1) / 2 <= delay <= 0.01 * 2 ** (attempt - 1)


@pytest.mark.parametrize(
    "header,expected",
    [
        ("0.2", 0.2),
        ("1000", 0.3),  # capped at retry_max_delay
        (email.utils.formatdate(time.time() - 60, usegmt=True), 0.0),  # an HTTP date in the past
    ],
    ids=["seconds", "capped", "http-date"],
)
async def test_retry_after_header_sets_the_wait(server, open_runtime, header, expected):
    server.add(rate_limited(retry_after=header), text("ok"))
    runtime, _ = await _turns(open_runtime, "hi", flags={"llm": {"retry_base_delay": 5.0, "retry_max_delay": 0.3}})
    (retry,) = of_type(runtime.events, "retrying")
    assert retry.delay == pytest.approx(expected)
    assert "Rate limited" in retry.reason


# -- auth: no retry, the message names the variable to set --------------------------------------


@pytest.mark.parametrize("fault", [error(401), error(403)], ids=["401", "403"])
async def test_auth_error_is_not_retried_and_names_the_variable(server, open_runtime, fault):
    server.add(fault, text("with a good key"))
    runtime, history = await _turns(open_runtime, "hi", "again")
    assert not of_type(runtime.events, "retrying")
    err = of_type(runtime.events, "turn_error")[0]
    assert "OPENAI_API_KEY" in err.message and "--api-key" in err.message
    assert_readable(err.message)
    assert len(server.requests) == 2  # one for each turn: no retry
    assert_well_formed(server.requests[-1]["messages"])
    assert [m.role for m in history] == ["user", "user", "assistant"]


async def test_out_of_quota_429_is_not_retried(server, open_runtime):
    server.add(
        error(
            429,
            code="insufficient_quota",
            type="insufficient_quota",
            message="You exceeded your current quota, please check your plan and billing details.",
        ),
        text("paid up"),
    )
    runtime, history = await _turns(open_runtime, "hi", "again")
    assert not of_type(runtime.events, "retrying")
    (err,) = of_type(runtime.events, "turn_error")
    assert "quota" in err.message and "billing" in err.message
    assert_readable(err.message)
    assert len(server.requests) == 2
    assert_well_formed(server.requests[-1]["messages"])


async def test_missing_api_key_is_an_auth_error_not_a_network_retry(server, open_runtime):
    runtime, history = await _turns(open_runtime, "hi", flags={"api_key": None})
    assert not of_type(runtime.events, "retrying")
    (err,) = of_type(runtime.events, "turn_error")
    assert "No API key" in err.message and "OPENAI_API_KEY" in err.message
    assert_readable(err.message)
    assert not server.requests
    assert [m.role for m in history] == ["user"]


# -- connection refused -------------------------------------------------------------------------


async def test_connection_refused_retries_then_says_where_and_the_next_request_is_valid(server, open_runtime):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    runtime, _ = await _turns(open_runtime, "hi", flags={**RETRY_FAST, "api_base": base})
    assert len(of_type(runtime.events, "retrying")) == 2
    (err,) = of_type(runtime.events, "turn_error")
    assert "Cannot reach" in err.message and base in err.message
    assert_readable(err.message)
    # The provider is back: the same session goes on with a valid request.
    server.add(text("hello again"))
    again, history = await _turns(open_runtime, "are you there?", resume_id=runtime.session.id)
    assert [m.role for m in history] == ["user", "user", "assistant"]
    (request,) = server.requests
    assert_well_formed(request["messages"])
    assert [m["content"] for m in request["messages"] if m["role"] == "user"] == ["hi", "are you there?"]


# -- faults after the answer started: kept as interrupted, not retried ---------------------------

MID_TEXT = "The answer is forty-two, because the question was"
MID_STREAM = {
    "cut mid text (connection drop)": (cut(after_chunks=4, text=MID_TEXT), MID_TEXT),
    "cut mid text (clean EOF, no finish)": (cut(after_chunks=4, text=MID_TEXT, mode="eof"), MID_TEXT),
    "malformed SSE mid text": (
        raw(
            [
                _chunk({"role": "assistant", "content": ""}),
                "",
                _chunk({"content": "The answer is"}),
                "",
                "data: {not json",
                "",
                "data: [DONE]",
                "",
            ]
        ),
        MID_TEXT,
    ),
    "hang then drop mid text": (hang(0.2, text="The answer is", then="abort"), MID_TEXT),
    "cut mid tool arguments": (cut(after_chunks=4, tool_calls=[CALL]), None),
    "cut mid tool arguments (clean EOF)": (cut(after_chunks=4, tool_calls=[CALL], mode="eof"), None),
    "cut mid tool arguments after text": (
        cut(after_chunks=6, text="Let me run it.", tool_calls=[CALL]),
        "Let me run it.",
    ),
}


@pytest.mark.parametrize("fault,full_text", MID_STREAM.values(), ids=MID_STREAM.keys())
async def test_fault_mid_stream_keeps_the_partial_and_the_next_request_is_valid(server, open_runtime, fault, full_text):
    server.add(fault, text("continuing"))
    runtime, history = await _turns(open_runtime, "question", "go on", flags=RETRY_FAST)
    assert not of_type(runtime.events, "retrying")  # part of the answer arrived: never re-asked
    assert not of_type(runtime.events, "tool_started")  # a half-sent call is never run
    (err,) = of_type(runtime.events, "turn_error")
    assert "broke off" in err.message or "ended before" in err.message
    assert "kept" in err.message
    assert_readable(err.message)
    assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["error", "ok"]

    partial = history[1]
    assert (partial.role, partial.status) == ("assistant", "interrupted")
    assert not partial.tool_calls and partial.meta.get("error")
    if full_text:
        assert partial.content and full_text.startswith(partial.content)
    else:
        assert not partial.content
        (half,) = partial.meta["partial_tool_calls"]
        assert half["id"] == "c1" and half["name"] == "terminal-execute"
        assert CALL[2]["command"] not in half["arguments"]  # really cut short
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[-1].content == "continuing"

    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert request[-1] == {"role": "user", "content": "go on"}
    assistants = [m for m in request if m["role"] == "assistant"]
    if full_text:  # the model sees what it said before the cut, and nothing of the half call
        assert assistants == [{"role": "assistant", "content": partial.content}]
    else:
        assert assistants == []
