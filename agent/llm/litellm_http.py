"""The HTTP client cairn hands litellm: it follows no redirect, and meters every answer.

Why: litellm's own clients follow redirects. A 307 from the endpoint made them post the request
again to whatever host its Location named: the whole conversation, and the key too when it
travels in a provider's own header (Anthropic's `x-api-key`, Azure's `api-key`; httpx drops
only `Authorization`). cairn's own client (agent/llm/http.py) follows none; this gives litellm
the same rule, and the same caps on what it reads (agent/llm/wire_limits.py), through the two
doors litellm opens for a client of the caller's:

- `litellm.aclient_session` (documented): the httpx client its OpenAI-SDK route wraps (openai/,
  azure/ and the OpenAI-compatible providers in SDK_ROUTE_PROVIDERS);
- `client=` on `acompletion`: an `AsyncHTTPHandler`, for every other provider's route.

Both carry the one client made at import (`install`), built by litellm's own AsyncHTTPHandler so
its SSL, proxy and transport settings stay as litellm makes them; connections are still pooled.
A redirect then fails the request, and agent/llm/error_map.py says where it pointed.

Which route a provider takes is litellm's choice and not documented: SDK_ROUTE_PROVIDERS is
what the pinned version does (handed an AsyncHTTPHandler, those fail before sending anything).
UNGUARDED_PROVIDERS take no client of the caller's at all, so litellm offers no way to stop them
following a redirect. tests/llm/test_litellm_redirects.py sends a request for every provider
litellm lists to a redirecting server and fails when either table no longer says what happens.
"""

from __future__ import annotations

from typing import Any

# Providers whose chat requests litellm 1.106.2 sends with the openai SDK (through
# `litellm.aclient_session`); an AsyncHTTPHandler given as `client=` breaks them.
SDK_ROUTE_PROVIDERS = frozenset(
    [
        "ai21",
        "ai21_chat",
        "aiml",
        "apertis",
        "assemblyai",
        "azure",
        "azure_text",
        "baseten",
        "cerebras",
        "charity_engine",
        "chutes",
        "codestral",
        "cognition",
        "cortecs",
        "custom_openai",
        "darkbloom",
        "dashscope",
        "deepinfra",
        "docker_model_runner",
        "empower",
        "featherless_ai",
        "friendliai",
        "galadriel",
        "github",
        "helicone",
        "hyperbolic",
        "inception",
        "lambda_ai",
        "libertai",
        "litellm_proxy",
        "llamafile",
        "lm_studio",
        "meta",
        "meta_llama",
        "modelscope",
        "moonshot",
        "morph",
        "nano-gpt",
        "nebius",
        "neosantara",
        "novita",
        "nscale",
        "nvidia_nim",
        "openai",
        "parasail",
        "perplexity",
        "pinstripes",
        "poe",
        "prism",
        "publicai",
        "qwen_ai_platform",
        "qwencloud",
        "reka",
        "sail",
        "sambanova",
        "scaleway",
        "scx-ai",
        "synthetic",
        "tencent",
        "tensormesh",
        "text-completion-inception",
        "text-completion-openai",
        "v0",
        "vercel_ai_gateway",
        "volcengine",
        "wandb",
        "xiaomi_mimo",
        "xinference",
        "zai",
    ]
)
# Providers whose litellm route builds its own client, whatever it is given: they still follow
# a redirect (README "Dependencies" names them).
UNGUARDED_PROVIDERS = frozenset(
    [
        "aiohttp_openai",
        "amazon_nova",
        "anthropic_text",
        "cloudflare",
        "cohere",
        "cohere_chat",
        "custom",
        "maritalk",
        "oobabooga",
        "petals",
        "text-completion-codestral",
    ]
)


def install(litellm: Any) -> None:
    """At import: litellm's OpenAI-SDK route gets the client that follows no redirect."""
    litellm.aclient_session = _new_handler().client


def client_argument(litellm: Any, provider: str) -> dict[str, Any]:
    """What to add to `acompletion`'s arguments for a request litellm routes to `provider`: the
    shared client as an AsyncHTTPHandler, or nothing for a route that takes none (the SDK route
    finds the same client in `litellm.aclient_session`)."""
    if provider in SDK_ROUTE_PROVIDERS or provider in UNGUARDED_PROVIDERS:
        return {}
    handler = _new_handler()
    handler.client = shared_client(litellm)
    return {"client": handler}


def shared_client(litellm: Any) -> Any:
    """The client `install` made; made again if something put another in its place."""
    current = getattr(litellm, "aclient_session", None)
    if current is None or not guarded(current):
        install(litellm)
    return litellm.aclient_session


def guarded(client: Any) -> bool:
    """`client` follows no redirect and meters its answers (the two things `install` sets)."""
    from agent.llm.metered_body import bound_response

    hooks = getattr(client, "event_hooks", {}) or {}
    return getattr(client, "follow_redirects", True) is False and bound_response in hooks.get("response", [])


def _new_handler() -> Any:
    """litellm's AsyncHTTPHandler, following no redirect, its answers metered. (Cheap: litellm
    keeps its SSL context; the transport opens nothing until a request.)"""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    from agent.llm.metered_body import bound_response

    return AsyncHTTPHandler(follow_redirects=False, event_hooks={"response": [bound_response]})
