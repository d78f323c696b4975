"""Anthropic's faults through both clients (the fast path and litellm), with the same typed
error and the same words; the OpenAI-protocol faults run through both in
tests/loop/test_provider_faults.py and test_faults_and_interrupts.py."""

from __future__ import annotations

import pytest

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import AuthError, ContextTooLongError, NetworkError, ProviderError, RateLimitError
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, error
from tests.fakes.anthropic_server import text as a_text

TEXT = "The answer is forty-two, because the question was long"


@pytest.fixture(params=["auto", "litellm"])
def client(request) -> str:
    return request.param


async def _fail(client: str, step) -> Exception:
    with FakeAnthropicServer([step]) as srv:
        request = ChatRequest(
            model="anthropic/claude-sonnet-4-5",
            messages=[{"role": "user", "content": "hi"}],
            tools=[],
            api_base=srv.base_url,
            api_key="sk-ant-test",
            max_tokens=1000,
            client=client,
        )
        with pytest.raises(Exception) as caught:
            await stream_chat(request)
    return caught.value


def _readable(message: str) -> None:
    assert message and "\n" not in message and "Traceback" not in message and "litellm." not in message


@pytest.mark.parametrize(
    "step,kind,says,retryable",
    [
        (error(429, headers={"retry-after": "3"}), RateLimitError, "Rate limited", True),
        (error(529, "Overloaded"), ProviderError, "verloaded", True),  # litellm calls it a 500
        (error(500), ProviderError, "500", True),
        (error(401, "invalid x-api-key"), AuthError, "ANTHROPIC_API_KEY", False),
        (error(400, "prompt is too long: 210000 tokens > 200000 maximum"), ContextTooLongError, "too long", False),
    ],
    ids=["429", "529", "500", "401", "too-long"],
)
async def test_anthropic_error_statuses_read_the_same(client, step, kind, says, retryable):
    exc = await _fail(client, step)
    assert isinstance(exc, kind), repr(exc)
    assert says in str(exc) and exc.retryable == retryable
    _readable(str(exc))
    if isinstance(exc, RateLimitError):
        assert exc.retry_after == pytest.approx(3)


@pytest.mark.parametrize("mode,says", [("drop", "broke off"), ("eof", "ended before")])
async def test_anthropic_stream_cut_mid_text_keeps_what_arrived(client, mode, says):
    exc = await _fail(client, Reply(text=TEXT, chunk_size=6, cut_after=6, cut_mode=mode))
    assert isinstance(exc, NetworkError) and exc.retryable
    assert says in str(exc) or "broke off" in str(exc)
    _readable(str(exc))
    partial = exc.partial
    assert partial.content and TEXT.startswith(partial.content) and partial.content != TEXT


async def test_anthropic_answer_without_the_cut_is_whole(client):
    with FakeAnthropicServer([a_text(TEXT)]) as srv:
        result = await stream_chat(
            ChatRequest(
                model="anthropic/claude-sonnet-4-5",
                messages=[{"role": "user", "content": "hi"}],
                tools=[],
                api_base=srv.base_url,
                api_key="sk-ant-test",
                client=client,
            )
        )
    assert (result.content, result.finish_reason) == (TEXT, "stop")
