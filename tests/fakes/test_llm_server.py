"""The scripted fake server, driven through litellm exactly as the app drives a provider.

These tests also pin what litellm 1.106.2 raises for each failure mode, so the app's
error mapping has a reference (and a litellm upgrade that changes it fails here first).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402  (after the offline switch)
import openai  # noqa: E402
from litellm.exceptions import MidStreamFallbackError  # noqa: E402  (not exported at top level)

from tests.fakes.llm_server import (  # noqa: E402
    NO_MORE_RESPONSES,
    FakeLLMServer,
    context_length_exceeded,
    cut,
    error,
    filler_text,
    hang,
    rate_limited,
    raw,
    step_from_json,
    text,
    tool_calls,
)

litellm.suppress_debug_info = True

REPO_ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "filesystem-read",
            "description": "Read a file",
            "parameters": {
                "type": "object",
                "properties": {"filePath": {"type": "string"}},
                "required": ["filePath"],
            },
        },
    }
]


async def _stream(base_url: str, **kw: Any):
    args: dict[str, Any] = dict(
        model="openai/fake-model",
        api_base=base_url,
        api_key="sk-test",
        messages=MESSAGES,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
        num_retries=0,
    )
    args.update(kw)
    return await litellm.acompletion(**args)


class Collected:
    def __init__(self) -> None:
        self.chunks: list[Any] = []
        self.text = ""
        self.calls: dict[int, dict[str, str]] = {}
        self.usage: Any = None
        self.finish_reason: str | None = None

    def feed(self, chunk: Any) -> None:
        self.chunks.append(chunk)
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta.content:
                self.text += delta.content
            for tc in delta.tool_calls or []:
                slot = self.calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        slot["name"] = tc.function.name
                    if tc.function.arguments:
                        slot["arguments"] += tc.function.arguments
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason


async def collect(base_url: str, into: Collected | None = None, **kw: Any) -> Collected:
    out = into if into is not None else Collected()
    response = await _stream(base_url, **kw)
    async for chunk in response:
        out.feed(chunk)
    return out


@pytest.fixture(scope="module", autouse=True)
def _warm_litellm():
    """litellm's first call lazily imports openai.resources and the token counter (~1.5 s).

    Pay that once here so every test's own timing reflects the streaming path only.
    """
    with FakeLLMServer([text("warm")]) as srv:
        asyncio.run(collect(srv.base_url))


@pytest.fixture
def server():
    with FakeLLMServer() as srv:
        yield srv


# --------------------------------------------------------------------------- happy paths


async def test_text_streams_and_reassembles(server):
    body = "hello world, this is a streamed answer."
    server.add(text(body, chunk_size=5, prompt_tokens=11, completion_tokens=7))
    got = await collect(server.base_url)
    assert got.text == body
    assert got.finish_reason == "stop"
    assert got.usage is not None
    assert (got.usage.prompt_tokens, got.usage.completion_tokens, got.usage.total_tokens) == (11, 7, 18)
    # role delta + 8 content deltas + finish (+ usage merged by litellm): really streamed in pieces
    assert len([c for c in got.chunks if c.choices and c.choices[0].delta.content]) == 8


async def test_requests_are_recorded(server):
    server.add(text("ok"))
    await collect(server.base_url)
    (req,) = server.requests
    assert req["model"] == "fake-model"
    assert req["messages"] == MESSAGES
    assert req["tools"] == TOOLS
    assert req["stream"] is True
    assert req["stream_options"] == {"include_usage": True}
    assert server.request_headers[0]["authorization"] == "Bearer sk-test"
    # a snapshot, not the live list
    server.requests.clear()
    assert len(server.requests) == 1


async def test_single_tool_call(server):
    args = '{"filePath": "src/agent/very_long_module_name.py"}'
    server.add(tool_calls([("call_1", "filesystem-read", args)], args_chunk_size=6))
    got = await collect(server.base_url)
    assert got.calls == {0: {"id": "call_1", "name": "filesystem-read", "arguments": args}}
    assert got.finish_reason == "tool_calls"
    assert got.text == ""
    assert got.usage is not None
    # the arguments really arrived in several deltas
    arg_deltas = [
        tc
        for c in got.chunks
        for ch in c.choices or []
        for tc in ch.delta.tool_calls or []
        if tc.function is not None and tc.function.arguments
    ]
    assert len(arg_deltas) > 3


async def test_two_parallel_tool_calls_with_text(server):
    a = '{"filePath": "a.py"}'
    b = {"filePath": "b.py", "offset": 10}
    server.add(tool_calls([("call_a", "filesystem-read", a), ("call_b", "filesystem-read", b)], text="Reading both."))
    got = await collect(server.base_url)
    assert got.text == "Reading both."
    assert got.calls[0] == {"id": "call_a", "name": "filesystem-read", "arguments": a}
    assert got.calls[1]["id"] == "call_b"
    assert json.loads(got.calls[1]["arguments"]) == b
    assert got.finish_reason == "tool_calls"


async def test_queue_order_add_and_exhaustion(server):
    server.add(text("one"), text("two"))
    assert server.pending == 2
    assert (await collect(server.base_url)).text == "one"
    server.add(text("three"))
    assert (await collect(server.base_url)).text == "two"
    assert (await collect(server.base_url)).text == "three"
    assert (await collect(server.base_url)).text == NO_MORE_RESPONSES
    assert len(server.requests) == 4


async def test_check_script_fails_on_an_overrun_and_on_an_unused_step():
    """What the `server` fixtures run at teardown: the script must be used exactly."""
    with FakeLLMServer([text("one")]) as srv:
        assert (await collect(srv.base_url)).text == "one"
        srv.check_script()  # used exactly
        assert (await collect(srv.base_url)).text == NO_MORE_RESPONSES
        assert srv.overruns == 1
        srv.allow_unused = True  # the opt-out covers unused steps, never an overrun
        with pytest.raises(AssertionError, match=r"request\(s\) \[2\] found no scripted step left"):
            srv.check_script()
    with FakeLLMServer([text("one"), text("two")]) as srv:
        assert (await collect(srv.base_url)).text == "one"
        with pytest.raises(AssertionError, match=r"1 scripted step\(s\) were never requested: Text"):
            srv.check_script()
        srv.allow_unused = True
        srv.check_script()
    with FakeLLMServer([text("first")]) as srv:  # a router for a test whose request count is open
        srv.add_forever(lambda request: text(f"answer {len(request['messages'])}"))
        assert (await collect(srv.base_url)).text == "first"
        assert (await collect(srv.base_url)).text == "answer 2"
        assert (await collect(srv.base_url)).text == "answer 2"
        srv.check_script()  # no overrun, nothing unused


async def test_non_stream_text_and_tool_calls(server):
    server.add(text("plain answer"), tool_calls([("c1", "filesystem-read", '{"filePath": "x"}')], text="t"))
    common = dict(model="openai/fake-model", api_base=server.base_url, api_key="sk-test", num_retries=0)
    r1 = await litellm.acompletion(messages=MESSAGES, **common)
    assert r1.choices[0].message.content == "plain answer"
    assert r1.usage.total_tokens > 0
    r2 = await litellm.acompletion(messages=MESSAGES, tools=TOOLS, **common)
    (call,) = r2.choices[0].message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == ("c1", "filesystem-read", '{"filePath": "x"}')
    assert r2.choices[0].finish_reason == "tool_calls"
    assert "stream" not in server.requests[0]


def test_sync_streaming_completion(server):
    server.add(text("sync path works"))
    response = litellm.completion(
        model="openai/fake-model",
        api_base=server.base_url,
        api_key="sk-test",
        messages=MESSAGES,
        stream=True,
        num_retries=0,
    )
    out = Collected()
    for chunk in response:
        out.feed(chunk)
    assert out.text == "sync path works"


async def test_delay_paces_the_stream(server):
    body = filler_text(60)
    server.add(text(body, chunk_size=10, delay=0.01))  # ~ (len/10) events at 100/s
    got = await collect(server.base_url)
    assert got.text == body
    # Every event after the first (at least one per text chunk) waited for its slot on the schedule.
    assert len(server.waits) >= -(-len(body) // 10)
    assert server.waits == [("pace", round(i * 0.01, 6)) for i in range(1, len(server.waits) + 1)]


def test_models_endpoint(server):
    with urllib.request.urlopen(server.base_url + "/models", timeout=2) as resp:
        data = json.load(resp)
    assert data["object"] == "list"
    assert [m["id"] for m in data["data"]] == ["fake-model"]


# --------------------------------------------------------------------------- HTTP errors


async def test_429_rate_limit_with_retry_after(server):
    server.add(rate_limited(retry_after=7))
    with pytest.raises(litellm.RateLimitError) as info:
        await collect(server.base_url)
    exc = info.value
    assert exc.status_code == 429
    assert isinstance(exc, openai.RateLimitError)
    # litellm keeps the provider's headers here; exc.response is a synthetic httpx.Response
    # whose .headers are EMPTY in litellm 1.106.2.
    assert exc.litellm_response_headers["retry-after"] == "7"
    assert len(server.requests) == 1  # num_retries=0 really disables retries


async def test_no_retry_params_means_openai_sdk_retries_twice(server):
    server.add(*[error(500)] * 3)
    with pytest.raises(litellm.InternalServerError):
        await collect(server.base_url, num_retries=None)
    assert len(server.requests) == 3


async def test_max_retries_zero_also_disables_retries(server):
    server.add(error(500), text("never reached"))
    with pytest.raises(litellm.InternalServerError):
        await collect(server.base_url, num_retries=None, max_retries=0)
    assert len(server.requests) == 1


async def test_401_authentication_error(server):
    server.add(error(401))
    with pytest.raises(litellm.AuthenticationError) as info:
        await collect(server.base_url)
    assert info.value.status_code == 401


async def test_400_context_length_exceeded(server):
    server.add(context_length_exceeded())
    with pytest.raises(litellm.ContextWindowExceededError) as info:
        await collect(server.base_url)
    assert isinstance(info.value, litellm.BadRequestError)
    assert info.value.status_code == 400
    assert "maximum context length" in str(info.value)


async def test_plain_400_is_bad_request(server):
    server.add(error(400, message="Invalid 'messages[1].content': bad."))
    with pytest.raises(litellm.BadRequestError) as info:
        await collect(server.base_url)
    assert not isinstance(info.value, litellm.ContextWindowExceededError)


async def test_500_internal_server_error(server):
    server.add(error(500))
    with pytest.raises(litellm.InternalServerError) as info:
        await collect(server.base_url)
    assert info.value.status_code == 500
    assert info.value.litellm_response_headers is not None  # a real HTTP answer


async def test_503_service_unavailable(server):
    server.add(error(503))
    with pytest.raises(litellm.ServiceUnavailableError) as info:
        await collect(server.base_url)
    assert info.value.status_code == 503
    assert not isinstance(info.value, MidStreamFallbackError)


async def test_connection_refused(server):
    base = server.base_url
    server.close()
    with pytest.raises(litellm.InternalServerError) as info:
        await collect(base)
    exc = info.value
    # NOT litellm.APIConnectionError: litellm 1.106.2 maps openai's connection error to a 500.
    assert not isinstance(exc, litellm.APIConnectionError)
    assert "Connection error" in str(exc)
    assert exc.status_code == 500
    assert exc.litellm_response_headers is None  # tells it apart from a real HTTP 500
    chain, cur = [], exc
    while cur is not None:
        chain.append(type(cur))
        cur = cur.__cause__ or cur.__context__
    assert openai.APIConnectionError in chain
    assert ConnectionRefusedError in chain


# --------------------------------------------------------------------------- broken streams


async def test_cut_mid_text_raises_midstream_fallback(server):
    server.add(cut(3, "hello world and more"))  # role delta, "hello", " worl", then drop
    got = Collected()
    with pytest.raises(MidStreamFallbackError) as info:
        await collect(server.base_url, into=got)
    exc = info.value
    assert got.text == "hello worl"
    assert isinstance(exc, litellm.ServiceUnavailableError)
    assert isinstance(exc.original_exception, litellm.APIConnectionError)
    assert exc.status_code == 500
    assert exc.generated_content == "hello worl"
    assert exc.is_pre_first_chunk is False


async def test_cut_mid_tool_arguments(server):
    args = '{"filePath": "a/rather/long/path/to/a/file.py"}'
    server.add(cut(4, tool_calls=[("call_1", "filesystem-read", args)]))  # role, call head, 2 fragments
    got = Collected()
    with pytest.raises(MidStreamFallbackError) as info:
        await collect(server.base_url, into=got)
    assert isinstance(info.value.original_exception, litellm.APIConnectionError)
    assert info.value.generated_content == ""
    assert got.calls[0]["id"] == "call_1"
    assert 0 < len(got.calls[0]["arguments"]) < len(args)


async def test_clean_eof_without_done_ends_silently(server):
    server.add(cut(3, "hello world and more", mode="eof"))
    got = await collect(server.base_url)
    assert got.text == "hello worl"
    assert got.finish_reason == "stop"  # synthesised by litellm: truncation is invisible


async def test_malformed_sse_json(server):
    server.add(raw(["data: {not json", "", "data: [DONE]", ""]))
    with pytest.raises(MidStreamFallbackError) as info:
        await collect(server.base_url)
    assert isinstance(info.value.original_exception, litellm.APIConnectionError)
    assert info.value.is_pre_first_chunk is True


async def test_error_event_inside_stream(server):
    server.add(raw(['data: {"error": {"message": "overloaded", "type": "server_error"}}', ""]))
    with pytest.raises(MidStreamFallbackError) as info:
        await collect(server.base_url)
    assert "overloaded" in str(info.value)


async def test_empty_stream_bodies_end_silently(server):
    server.add(raw([]), raw(["data: [DONE]", ""]), text(""))
    for _ in range(3):
        got = await collect(server.base_url)
        assert got.text == ""
        assert got.calls == {}


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (raw([]), "Empty or invalid response"),  # text/event-stream, empty body
        (error(200, body=""), "Expecting value"),  # application/json, Content-Length: 0
    ],
)
async def test_empty_non_stream_body(server, step, message):
    server.add(step)
    with pytest.raises(litellm.InternalServerError, match=message):
        await litellm.acompletion(
            model="openai/fake-model", api_base=server.base_url, api_key="sk-test", messages=MESSAGES, num_retries=0
        )


async def test_repeated_chunks_trip_litellm_loop_guard(server):
    server.add(text("abc" * 110, chunk_size=3))
    with pytest.raises(MidStreamFallbackError, match="repeating the same chunk"):
        await collect(server.base_url)


async def test_hang_then_cancel_releases_the_server(server):
    server.add(hang(30, text="thinking"))
    first = asyncio.Event()

    async def consume() -> None:
        response = await _stream(server.base_url)
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta.content:
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    assert server.active_streams == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(server.wait_idle, 2)


async def test_hang_finishes_after_its_time(server):
    server.add(hang(0.2, text="slow"))
    got = await collect(server.base_url)
    assert got.text == "slow"
    assert server.waits == [("hang", 0.2)]  # held for its whole time, then finished normally


def test_close_stops_a_hanging_stream():
    """close() ends a stream that is hanging: the handler stops and the client sees the end of
    the connection long before the scripted hang would be over. No duration is asserted: the
    waits below are hang detectors, each far shorter than the hang, so only a close that waits
    for the hang (or never ends it) fails."""
    hang_seconds, guard = 600, 60
    srv = FakeLLMServer([hang(hang_seconds)])
    conn = socket.create_connection(("127.0.0.1", srv.port))
    try:
        conn.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 15\r\n\r\n{"stream":true}'
        )
        conn.settimeout(guard)
        received = b""
        while b"chat.completion.chunk" not in received:
            data = conn.recv(65536)
            assert data, received
            received += data
        assert srv.active_streams == 1  # the hang is being served
        closed = threading.Event()
        threading.Thread(target=lambda: (srv.close(), closed.set()), daemon=True).start()
        assert closed.wait(guard), "close() did not return while a stream hung"
        assert srv.wait_idle(guard), "the hanging handler kept serving after close()"
        try:  # the client is told: the connection ends (EOF or reset), no more data hangs on it
            while conn.recv(65536):
                pass
        except ConnectionResetError:
            pass
    finally:
        conn.close()
        srv.close()


# --------------------------------------------------------------------------- JSON script + CLI


def test_step_from_json_round_trip():
    step = step_from_json({"type": "tool_calls", "calls": [{"id": "c1", "name": "x", "arguments": {"a": 1}}]})
    assert step.calls[0].arguments == '{"a": 1}'
    assert step_from_json({"type": "error", "status": 429, "headers": {"Retry-After": "1"}}).headers == {
        "Retry-After": "1"
    }
    with pytest.raises(ValueError):
        step_from_json({"type": "nope"})


def test_docstring_script_example_parses():
    import tests.fakes.llm_server as mod

    doc = mod.__doc__ or ""
    start = doc.index("\n    [\n")
    end = doc.index("\n    ]\n", start) + len("\n    ]")
    steps = mod.steps_from_json(json.loads(doc[start:end]))
    assert len(steps) >= 8


def test_cli_serves_a_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                {"type": "text", "text": "from the cli", "chunk_size": 4},
                {"type": "error", "status": 429, "headers": {"Retry-After": "1"}},
            ]
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.llm_server", "--port", "0", "--script", str(script)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("PORT=")
        port = int(first.removeprefix("PORT="))
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        req = urllib.request.Request(
            url, data=json.dumps({"model": "m", "stream": True}).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert resp.headers["Content-Type"] == "text/event-stream"
            body = resp.read().decode()
        events = [line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        streamed = "".join(
            (c["choices"][0]["delta"].get("content") or "") for c in map(json.loads, events[:-1]) if c["choices"]
        )
        assert streamed == "from the cli"
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 429
        assert info.value.headers["Retry-After"] == "1"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
