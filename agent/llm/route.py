"""Which client carries a model's requests: the fast path, or litellm.

The fast path (agent/llm/fast.py) speaks two wire protocols itself: OpenAI's chat completions
for `openai/…` and OpenAI's own model names (any `api_base`: vLLM, llama.cpp, Ollama's `/v1`,
a proxy), and Anthropic's Messages API for `anthropic/…` and bare `claude-…`. Every other
provider goes through litellm, whose per-provider rules (Mistral's, DeepSeek's, Gemini's…)
are not copied here. `[llm] client = "litellm"` sends every model through litellm. Which
provider the fast path carries, on which protocol, from which default address, is
agent/llm/providers.py's table; agent/llm/client.py turns the answer into the protocol's object.

Answers from the model string alone: it is asked before anything is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agent.llm.providers import BY_NAME, Provider, WireName, bare_provider

# `llm.client` values.
CLIENT_AUTO = "auto"
CLIENT_LITELLM = "litellm"

# Where each protocol's requests are posted, under the base URL.
ENDPOINT_PATHS: dict[WireName, str] = {"openai": "/chat/completions", "anthropic": "/v1/messages"}


@dataclass(frozen=True)
class Wire:
    protocol: WireName
    url: str  # the endpoint requests are posted to
    model: str  # the name the provider knows the model by (the prefix dropped)
    provider: str  # whose key the request may carry (agent/llm/keys.py)


def fast_wire(model: str, api_base: str | None = None, client: str = CLIENT_AUTO) -> Wire | None:
    """The fast path's wire for `model`, or None: litellm carries it."""
    if client == CLIENT_LITELLM or not model:
        return None
    head, sep, rest = model.partition("/")
    if sep:
        provider, name = BY_NAME.get(head.lower()), rest
    else:
        provider, name = bare_provider(model), model
    if provider is None or provider.wire is None or not name:
        return None
    return Wire(provider.wire, _url(provider, provider.wire, api_base), name, provider.name)


def _url(provider: Provider, protocol: WireName, api_base: str | None) -> str:
    base = _base(api_base, provider)
    path = ENDPOINT_PATHS[protocol]
    return base if base.endswith(path) else base + path


def _base(api_base: str | None, provider: Provider) -> str:
    """The flag or config's api_base, else the provider's own variables (where litellm looks
    too), else its public address."""
    if api_base and api_base.strip():
        return api_base.strip().rstrip("/")
    for variable in provider.base_variables:
        value = os.environ.get(variable, "").strip()
        if value:
            return value.rstrip("/")
    return provider.default_base
