"""Provider faults and user interrupts: the turn ends cleanly and history stays valid."""

from __future__ import annotations

import asyncio
import os

import pytest

from agent.llm.errors import AuthError
from agent.runtime.ops import Interrupt, Prompt
from tests.context.test_orphans import assert_valid
from tests.fakes.llm_server import cut, error, hang, rate_limited, text, tool_calls
from tests.loop.conftest import of_type


@pytest.fixture(params=["auto", "litellm"])
def llm_client(request) -> str:
    """Every fault here holds through both clients: the fast path (agent/llm/fast.py) and
    litellm, with the same user-visible result."""
    return request.param


async def wait_for(predicate, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def test_rate_limit_is_retried_with_retry_after(server, open_runtime):
    server.add(rate_limited(retry_after=0), text("after the wait"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    (retry,) = of_type(runtime.events, "retrying")
    assert retry.attempt == 1 and retry.delay == 0
    assert of_type(runtime.events, "assistant_finished")[-1].message.content == "after the wait"
    assert len(server.requests) == 2


async def test_server_errors_give_up_after_max_retries(server, open_runtime):
    server.add(*[error(503) for _ in range(3)])
    runtime = await open_runtime(flags={"llm": {"max_retries": 2, "retry_base_delay": 0.01}})
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert len(of_type(runtime.events, "retrying")) == 2
    assert of_type(runtime.events, "turn_finished")[-1].status == "error"
    assert "503" in of_type(runtime.events, "turn_error")[0].message


async def test_auth_error_names_the_variable_and_is_not_retried(server, open_runtime):
    server.add(error(401))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    (err,) = of_type(runtime.events, "turn_error")
    assert "OPENAI_API_KEY" in err.message
    assert len(server.requests) == 1 and not of_type(runtime.events, "retrying")


async def test_stream_cut_mid_text_keeps_partial_and_next_request_is_valid(server, open_runtime):
    server.add(cut(after_chunks=4, text="The answer is forty-two, because"), text("recovered"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("question"))
        partial = (await runtime.history())[-1]
        assert partial.role == "assistant" and partial.status == "interrupted"
        assert partial.content and "The answer is forty-two, because".startswith(partial.content)
        await runtime.submit(Prompt("go on"))
    finally:
        await runtime.close()
    assert of_type(runtime.events, "turn_error")
    assert_valid(server.requests[-1]["messages"])
    assert server.requests[-1]["messages"][-1] == {"role": "user", "content": "go on"}


async def test_stream_cut_mid_tool_arguments(server, open_runtime):
    server.add(
        cut(after_chunks=4, tool_calls=[("c1", "terminal-execute", {"command": "echo hello world"})]), text("fine")
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("question"))
        await runtime.submit(Prompt("again"))
    finally:
        await runtime.close()
    assert not of_type(runtime.events, "tool_started")  # a half-sent call is never run
    assert_valid(server.requests[-1]["messages"])


async def test_interrupt_while_streaming_keeps_partial_text(server, open_runtime):
    server.add(hang(30, text="thinking about it"), text("next"))
    runtime = await open_runtime()
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt("slow")))
        await wait_for(lambda: of_type(runtime.events, "text_delta"))
        assert runtime.submit(Interrupt()).result()
        await asyncio.wait_for(turn, 5)
        assert of_type(runtime.events, "turn_finished")[-1].status == "interrupted"
        last = (await runtime.history())[-1]
        assert (last.role, last.status, last.content) == ("assistant", "interrupted", "thinking about it")
        await runtime.submit(Prompt("continue"))
    finally:
        await runtime.close()
    assert_valid(server.requests[-1]["messages"])


async def test_interrupt_kills_running_command_and_answers_the_call(server, open_runtime, workspace):
    pidfile = workspace / "pid"
    server.add(
        tool_calls(
            [
                ("c1", "terminal-execute", {"command": f"sh -c 'sleep 60 & echo $! > {pidfile}; wait'"}),
                ("c2", "terminal-execute", {"command": "echo never"}),
            ]
        ),
        text("ok"),
    )
    runtime = await open_runtime()
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt("run it")))
        await wait_for(lambda: pidfile.exists() and pidfile.read_text().strip())
        runtime.submit(Interrupt()).result()
        await asyncio.wait_for(turn, 5)
        child = int(pidfile.read_text())
        await wait_for(lambda: not _alive(child), timeout=3)
        history = await runtime.history()
        results = [m for m in history if m.role == "tool"]
        assert [r.tool_call_id for r in results] == ["c1", "c2"]
        assert all(r.status == "error" and r.content.startswith("Error:") for r in results)
        await runtime.submit(Prompt("what happened?"))
    finally:
        await runtime.close()
    assert_valid(server.requests[-1]["messages"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); count it as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_auth_error_type():
    assert not AuthError("x").retryable


async def test_connection_refused_is_a_network_error(open_runtime, server):
    runtime = await open_runtime(flags={"llm": {"max_retries": 1, "retry_base_delay": 0.01}})
    server.close()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert len(of_type(runtime.events, "retrying")) == 1
    assert "Cannot reach" in of_type(runtime.events, "turn_error")[0].message


async def test_empty_response_is_retried_then_reported(server, open_runtime):
    server.add(text(""), text(""))
    runtime = await open_runtime(flags={"llm": {"max_retries": 1, "retry_base_delay": 0.01}})
    try:
        await runtime.submit(Prompt("hi"))
        history = await runtime.history()
    finally:
        await runtime.close()
    assert "empty response" in of_type(runtime.events, "turn_error")[0].message
    assert [m.role for m in history] == ["user"]  # nothing empty was stored


async def test_malformed_sse_is_reported_not_crashing(server, open_runtime):
    from tests.fakes.llm_server import raw

    server.add(raw(["data: {not json", "", "data: [DONE]", ""]), text("fine now"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    # Broken before the first token: retried, and the retry succeeded.
    assert of_type(runtime.events, "retrying")
    assert of_type(runtime.events, "assistant_finished")[-1].message.content == "fine now"
