"""A key goes only where the user sent it (agent/llm/keys.py): the rule as a pure function, and
real requests through both clients to a server that writes down every header it gets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import AuthError
from agent.llm.keys import WITHHELD_KEY, choose_key
from agent.llm.providers import ADDRESSED_BY_USER, KEY_VARIABLES, OWN_HOSTS
from tests.fakes.hostile_http import Recorder
from tests.fakes.llm_server import FakeLLMServer, text

SECRET = "sk-ant-provider-secret-0123456789"

PROVIDERS_WITH_AN_ADDRESS = sorted(set(KEY_VARIABLES) - ADDRESSED_BY_USER)
hosts = st.from_regex(r"[a-z]{1,12}(\.[a-z]{2,8}){0,2}", fullmatch=True)
bases = st.builds(
    lambda scheme, host, path: f"{scheme}://{host}{path}",
    st.sampled_from(["http", "https"]),
    hosts,
    st.sampled_from(["", "/v1", "/api/v1/"]),
)


secrets = st.from_regex(r"sk-[A-Za-z0-9]{12,40}", fullmatch=True)


@given(provider=st.sampled_from(PROVIDERS_WITH_AN_ADDRESS), base=bases, secret=secrets)
def test_a_providers_key_never_goes_to_a_base_that_is_not_its_own(provider, base, secret):
    host = base.split("://", 1)[1].split("/", 1)[0]
    if host in OWN_HOSTS.get(provider, ()):
        return
    environ = {name: secret for name in KEY_VARIABLES[provider]}
    choice = choose_key(provider, api_base=base, api_key=None, environ=environ)
    assert choice.key is None and not choice.own_key_allowed
    assert choice.withheld == KEY_VARIABLES[provider][0]
    assert secret not in choice.missing_key_message(f"{provider}/m", base)


@given(
    provider=st.sampled_from(sorted(KEY_VARIABLES)), base=st.none() | bases, key=st.text(min_size=1).filter(str.strip)
)
def test_the_key_the_user_gave_goes_where_the_user_sent_it(provider, base, key):
    environ = {name: "sk-other" for name in KEY_VARIABLES[provider]}
    assert choose_key(provider, api_base=base, api_key=key, environ=environ).key == key.strip()


@pytest.mark.parametrize("provider", sorted(KEY_VARIABLES))
def test_without_a_custom_base_the_providers_own_key_goes_to_its_own_address(provider):
    environ = {KEY_VARIABLES[provider][0]: "sk-own"}
    for base in (None, "", "  "):
        assert choose_key(provider, api_base=base, api_key=None, environ=environ).key == "sk-own"


def test_a_providers_own_address_may_carry_its_key():
    environ = {"ANTHROPIC_API_KEY": "sk-own", "ANTHROPIC_BASE_URL": "https://gateway.example/anthropic"}
    for base in ("https://api.anthropic.com", "https://gateway.example/other"):
        assert choose_key("anthropic", api_base=base, api_key=None, environ=environ).key == "sk-own"


def test_openai_compatible_bases_take_the_openai_key_but_not_another_providers_host():
    environ = {"OPENAI_API_KEY": "sk-openai"}
    assert choose_key("openai", api_base="http://localhost:8000/v1", api_key=None, environ=environ).key == "sk-openai"
    assert choose_key("openai", api_base="https://api.anthropic.com", api_key=None, environ=environ).key is None


def _request(model: str, base: str, client: str = "auto") -> ChatRequest:
    return ChatRequest(
        model=model, messages=[{"role": "user", "content": "hi"}], tools=[], api_base=base, client=client, max_tokens=50
    )


def _carried_nowhere(recorder: Recorder, secret: str) -> None:
    for request in recorder.requests:
        assert secret not in repr(request["headers"]) and secret.encode() not in request["body"]


@pytest.mark.parametrize("client", ["auto", "litellm"])
async def test_anthropics_key_is_not_sent_to_the_users_openai_compatible_base(monkeypatch, client):
    """The issue's case: `--api-base` for an OpenAI-compatible server, a request for anthropic/…
    (a subagent's definition, a /model switch): ANTHROPIC_API_KEY must not go there."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    with Recorder() as server, pytest.raises(AuthError) as caught:
        await stream_chat(_request("anthropic/claude-sonnet-4-5", server.base_url, client))
    assert server.requests == []
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message and "--api-key" in message and SECRET not in message


async def test_a_provider_only_litellm_speaks_keeps_its_key_too(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    with Recorder() as server, pytest.raises(AuthError, match="GEMINI_API_KEY"):
        await stream_chat(_request("gemini/gemini-2.0-flash", server.base_url))
    assert server.requests == []


async def test_a_key_variable_cairn_does_not_know_is_kept_from_litellm(monkeypatch):
    """litellm reads a provider's variable itself when given no key: where that key may not go,
    it is handed one that authenticates nowhere, so the real one stays home whatever its name."""
    monkeypatch.setenv("NSCALE_API_KEY", SECRET)
    with Recorder() as server, pytest.raises(Exception):  # noqa: B017 - a 500 comes back; only what the server got matters
        await stream_chat(_request("nscale/some-model", server.base_url))
    assert server.got.is_set()
    _carried_nowhere(server, SECRET)
    assert WITHHELD_KEY in repr(server.requests[0]["headers"])


@pytest.mark.parametrize("client", ["auto", "litellm"])
async def test_the_openai_key_still_goes_to_an_openai_compatible_base(monkeypatch, client):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-compatible")
    with FakeLLMServer([text("hello")]) as server:
        result = await stream_chat(_request("openai/fake-model", server.base_url, client))
        headers = server.request_headers[-1]
    assert result.content == "hello" and headers["authorization"] == "Bearer sk-openai-compatible"
