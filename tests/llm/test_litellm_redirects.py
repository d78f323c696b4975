"""Guard for agent/llm/litellm_http.py's tables: which of litellm's routes take cairn's client.

litellm does not document which providers go through the openai SDK (the client in
`litellm.aclient_session`) and which through its own handler (`client=`), nor that a few take
no client of the caller's at all. The pinned version's answer is written down in
SDK_ROUTE_PROVIDERS and UNGUARDED_PROVIDERS; this sends one request for every provider litellm
lists, as cairn sends it, to a server that redirects to another, and fails when a provider
follows the redirect without being listed as unguarded, when a listed one no longer follows
(the table can shrink), or when cairn's client breaks a provider's route (the table is wrong)."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.llm.litellm_http import SDK_ROUTE_PROVIDERS, UNGUARDED_PROVIDERS
from agent.llm.litellm_stream import LitellmStream
from agent.llm.offline import import_litellm
from tests.fakes.hostile_http import Recorder, Redirector

# Said by a route handed a client it cannot use (the table put the provider on the wrong side).
WRONG_CLIENT = ("has no attribute", "is not an instance of")
# Providers whose requests must reach the redirecting server in this test (so the run proves
# something for the ones people use).
MUST_REACH = {"openai", "anthropic", "gemini", "mistral", "deepseek", "groq", "openrouter", "azure", "xai"}
PER_REQUEST_S = 10.0


async def _send(provider: str, api_base: str) -> str:
    kwargs: dict[str, Any] = dict(
        model=f"{provider}/some-model",
        messages=[{"role": "user", "content": "the conversation"}],
        stream=True,
        api_base=api_base,
        api_key="sk-test",
        num_retries=0,
        max_retries=0,
        timeout=PER_REQUEST_S,
    )
    try:
        async with asyncio.timeout(PER_REQUEST_S):
            async for _ in LitellmStream(kwargs).chunks():
                pass
    except Exception as exc:  # every request fails here: only what it says matters
        return f"{type(exc).__name__}: {exc}"
    return ""


async def test_every_provider_litellm_lists_follows_no_redirect_unless_listed_unguarded():
    litellm = import_litellm()
    providers = sorted({str(getattr(p, "value", p)) for p in litellm.provider_list})
    followed, reached, wrong = set(), set(), {}
    with Recorder() as other, Redirector(other.base_url) as first:
        for provider in providers:
            before_first, before_other = len(first.requests), len(other.requests)
            said = await _send(provider, first.base_url)
            if len(first.requests) > before_first:
                reached.add(provider)
            if len(other.requests) > before_other:
                followed.add(provider)
            if any(words in said for words in WRONG_CLIENT):
                wrong[provider] = said[:200]
    assert not wrong, f"cairn's client broke these providers' routes (fix SDK_ROUTE_PROVIDERS): {sorted(wrong)}"
    assert reached >= MUST_REACH, f"never reached the server: {sorted(MUST_REACH - reached)}"
    assert followed == UNGUARDED_PROVIDERS, (
        f"followed a redirect though not listed: {sorted(followed - UNGUARDED_PROVIDERS)}; "
        f"listed but no longer follows: {sorted(UNGUARDED_PROVIDERS - followed)}"
    )
    assert set(providers) >= SDK_ROUTE_PROVIDERS, "SDK_ROUTE_PROVIDERS names a provider litellm no longer has"
