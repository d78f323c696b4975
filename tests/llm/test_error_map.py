"""Provider errors in the user's words (agent/llm/error_map.py, issue 28 item 6): each names the
model, the address and what to do, never a library's internals; a connection that never
opened is an UnreachableError (its own short retry schedule)."""

from __future__ import annotations

import socket

import pytest

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.error_map import address, connect_failure, map_exception, readable
from agent.llm.errors import BadRequestError, LLMError, NetworkError, UnreachableError
from agent.llm.offline import import_litellm

INTERNALS = ("litellm", "0x", "ssl:", "Handle with", "Traceback", "SSLContext", "<")

ANTHROPIC_DNS = (
    "litellm.InternalServerError: AnthropicException - Cannot connect to host api.anthropic.com:443 "
    "ssl:<ssl.SSLContext object at 0x7fcd062d6ba0> [Name or service not known]. "
    "Handle with `litellm.InternalServerError`."
)


def closed_port() -> int:
    """A loopback port nothing listens on: bound, read, closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_plain(message: str) -> None:
    assert message and "\n" not in message
    for word in INTERNALS:
        assert word not in message, (word, message)


def _wrapped(message: str, cause: BaseException, provider: str = "anthropic") -> Exception:
    """A litellm error raised from `cause`, the way litellm wraps what aiohttp raised."""
    exc = import_litellm().InternalServerError(message=message, llm_provider=provider, model="m")
    exc.__cause__ = cause
    return exc


async def _failure(model: str, api_base: str | None, api_key: str = "sk-test") -> LLMError:
    request = ChatRequest(
        model=model, messages=[{"role": "user", "content": "hi"}], tools=[], api_base=api_base, api_key=api_key
    )
    with pytest.raises(LLMError) as caught:
        await stream_chat(request)
    return caught.value


def test_readable_drops_library_internals():
    text = readable(Exception(ANTHROPIC_DNS))
    assert text == "Cannot connect to host api.anthropic.com:443 [Name or service not known]."
    assert_plain(text)


def test_readable_takes_a_tracebacks_last_line():
    raw = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: bad value\n'
    assert readable(Exception(raw)) == "bad value"


async def test_a_refused_connection_names_the_model_and_the_address():
    base = f"http://127.0.0.1:{closed_port()}/v1"
    err = await _failure("openai/fake-model", base)
    assert isinstance(err, UnreachableError) and err.retryable
    assert err.retry_delays is not None and len(err.retry_delays) == 2
    message = str(err)
    assert message.startswith(f"Cannot reach openai/fake-model at {base}: the connection was refused")
    assert "--api-base" in message  # what to do
    assert_plain(message)


async def test_a_refused_connection_through_another_provider_adapter():
    """The Anthropic adapter (aiohttp) words it differently: same error, same sentence."""
    base = f"http://127.0.0.1:{closed_port()}"
    err = await _failure("anthropic/claude-sonnet-4-5", base)
    assert isinstance(err, UnreachableError)
    assert str(err).startswith(f"Cannot reach anthropic/claude-sonnet-4-5 at {base}: the connection was refused")
    assert_plain(str(err))


def test_an_unknown_host_says_so_and_names_the_providers_host():
    exc = _wrapped(ANTHROPIC_DNS, socket.gaierror(-2, "Name or service not known"))
    assert connect_failure(exc) == ("unresolved", "api.anthropic.com:443")
    err = map_exception(exc, "anthropic/claude-sonnet-4-5")
    assert isinstance(err, UnreachableError)
    assert str(err).startswith(
        "Cannot reach anthropic/claude-sonnet-4-5 at api.anthropic.com:443: the host name could not be resolved."
    )
    assert "network" in str(err)
    assert_plain(str(err))


def test_an_unknown_host_given_as_api_base_points_at_the_setting():
    exc = _wrapped(
        "OpenAIException - Connection error.", socket.gaierror(-2, "Name or service not known"), provider="openai"
    )
    err = map_exception(exc, "openai/gpt-4o", "https://llm.example.invalid/v1")
    assert isinstance(err, UnreachableError)
    assert "at https://llm.example.invalid/v1: the host name could not be resolved" in str(err)
    assert "--api-base" in str(err)
    assert_plain(str(err))


def test_without_an_address_in_the_error_the_providers_default_host_is_named():
    exc = _wrapped("AnthropicException - Connection refused", ConnectionRefusedError(111, "Connection refused"))
    assert connect_failure(exc) == ("refused", None)
    err = map_exception(exc, "anthropic/claude-sonnet-4-5")
    assert "Cannot reach anthropic/claude-sonnet-4-5 at api.anthropic.com:" in str(err)


def test_an_address_never_shows_a_password_or_a_query():
    shown = address("openai/x", "https://user:hunter2@llm.example.com:8443/v1?key=abc")
    assert shown == "https://llm.example.com:8443/v1"
    assert address("openai/x", None) == "api.openai.com"
    assert address("somewhere/x", None) == "the provider's default address"


def test_other_network_errors_are_not_unreachable():
    litellm = import_litellm()
    reset = litellm.APIConnectionError(message="Connection reset by peer", llm_provider="openai", model="m")
    assert connect_failure(reset) is None
    err = map_exception(reset, "openai/gpt-4o", "http://127.0.0.1:9/v1")
    assert type(err) is NetworkError and err.retry_delays is None
    assert "openai/gpt-4o at http://127.0.0.1:9/v1" in str(err)
    assert_plain(str(err))


async def test_a_model_litellm_cannot_place_says_how_to_name_it():
    err = await _failure("no-such-model-anywhere", None)
    assert isinstance(err, BadRequestError) and not err.retryable
    assert "provider/model" in str(err) and "'no-such-model-anywhere'" in str(err)
    assert_plain(str(err).replace("'no-such-model-anywhere'", ""))
