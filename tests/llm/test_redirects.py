"""No HTTP client of cairn's follows a redirect: the request (the key in its header, the whole
conversation in its body) would go to a host the user never named. Two real servers: the
first answers with a redirect to the second, which must never hear from cairn."""

from __future__ import annotations

import pytest

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import RedirectRefusedError
from agent.llm.models import probe_window
from tests.fakes.hostile_http import Recorder, Redirector

KEY = "sk-secret-redirect-test-key"
CONVERSATION = "the secret plan is in the conversation"


async def _through(model: str, first: Redirector, client: str) -> Exception:
    request = ChatRequest(
        model=model,
        messages=[{"role": "user", "content": CONVERSATION}],
        tools=[],
        api_base=first.base_url,
        api_key=KEY,
        client=client,
        max_tokens=100,
    )
    with pytest.raises(Exception) as caught:
        await stream_chat(request)
    return caught.value


def _refused_clearly(exc: Exception, other: Recorder, first: Redirector) -> None:
    assert first.got.is_set(), "the first server was never asked"
    assert other.requests == [], "the request followed the redirect to the other host"
    assert isinstance(exc, RedirectRefusedError), repr(exc)
    assert not exc.retryable
    message = str(exc)
    assert "redirect" in message and "does not follow" in message and other.base_url in message, message
    assert KEY not in message and "\n" not in message and "litellm." not in message


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("model", ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"])
async def test_the_fast_path_follows_no_redirect(model, status):
    with Recorder() as other, Redirector(other.base_url, status) as first:
        exc = await _through(model, first, "auto")
    _refused_clearly(exc, other, first)


@pytest.mark.parametrize("model", ["openai/gpt-4o", "anthropic/claude-sonnet-4-5"])
async def test_the_litellm_client_follows_no_redirect(model):
    """`[llm] client = "litellm"`: litellm's own clients resent Anthropic's x-api-key and the
    conversation to the other host."""
    with Recorder() as other, Redirector(other.base_url) as first:
        exc = await _through(model, first, "litellm")
    _refused_clearly(exc, other, first)


@pytest.mark.parametrize(
    "model",
    [
        "gemini/gemini-2.0-flash",
        "mistral/mistral-large-latest",
        "deepseek/deepseek-chat",
        "groq/llama-3.3-70b",
        "openrouter/some/model",
        "xai/grok-2",
        "together_ai/some-model",
        "deepinfra/some-model",
        "ollama_chat/llama3",
        "azure/some-deployment",
    ],
)
async def test_providers_only_litellm_speaks_follow_no_redirect(model):
    with Recorder() as other, Redirector(other.base_url) as first:
        exc = await _through(model, first, "auto")
    _refused_clearly(exc, other, first)


def test_the_window_probe_follows_no_redirect():
    """A custom api_base's window is asked with the user's key in Authorization: urllib would
    have sent it on to wherever a redirect pointed."""
    with Recorder() as other, Redirector(other.base_url) as first:
        assert probe_window(first.base_url + "/v1", "openai/some-model", KEY, timeout=5) is None
    assert first.got.is_set() and other.requests == []
