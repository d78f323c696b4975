"""Which client carries a model's requests: the fast path, or litellm.

The fast path (agent/llm/fast.py) speaks two wire protocols itself: OpenAI's chat completions
for `openai/…` and OpenAI's own model names (any `api_base`: vLLM, llama.cpp, Ollama's `/v1`,
a proxy), and Anthropic's Messages API for `anthropic/…` and bare `claude-…`. Every other
provider goes through litellm, whose per-provider rules (Mistral's, DeepSeek's, Gemini's…)
are not copied here. `[llm] client = "litellm"` sends every model through litellm.

Answers from the model string alone: it is asked before anything is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

Protocol = Literal["openai", "anthropic"]

# `llm.client` values.
CLIENT_AUTO = "auto"
CLIENT_LITELLM = "litellm"

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"
ANTHROPIC_PATH = "/v1/messages"
CHAT_COMPLETIONS_PATH = "/chat/completions"
# OpenAI's models litellm places without a prefix (its own list names more; these are the
# families people type).
OPENAI_BARE_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")
# Where litellm looks for a base URL when none is given (the fast path honours the same).
BASE_VARIABLES: dict[Protocol, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
}
KEY_VARIABLES: dict[Protocol, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass(frozen=True)
class Wire:
    protocol: Protocol
    url: str  # the endpoint requests are posted to
    model: str  # the name the provider knows the model by (the prefix dropped)

    @property
    def key_variable(self) -> str:
        return KEY_VARIABLES[self.protocol]


def fast_wire(model: str, api_base: str | None = None, client: str = CLIENT_AUTO) -> Wire | None:
    """The fast path's wire for `model`, or None: litellm carries it."""
    if client == CLIENT_LITELLM or not model:
        return None
    head, sep, rest = model.partition("/")
    lowered = model.lower()
    if sep and head.lower() == "openai" and rest:
        return Wire("openai", _openai_url(api_base), rest)
    if sep and head.lower() == "anthropic" and rest:
        return Wire("anthropic", _anthropic_url(api_base), rest)
    if sep:
        return None
    if lowered.startswith(OPENAI_BARE_PREFIXES):
        return Wire("openai", _openai_url(api_base), model)
    if lowered.startswith("claude"):
        return Wire("anthropic", _anthropic_url(api_base), model)
    return None


def _base(api_base: str | None, protocol: Protocol, default: str) -> str:
    if api_base and api_base.strip():
        return api_base.strip().rstrip("/")
    for variable in BASE_VARIABLES[protocol]:
        value = os.environ.get(variable, "").strip()
        if value:
            return value.rstrip("/")
    return default


def _openai_url(api_base: str | None) -> str:
    base = _base(api_base, "openai", OPENAI_DEFAULT_BASE)
    return base if base.endswith(CHAT_COMPLETIONS_PATH) else base + CHAT_COMPLETIONS_PATH


def _anthropic_url(api_base: str | None) -> str:
    base = _base(api_base, "anthropic", ANTHROPIC_DEFAULT_BASE)
    return base if base.endswith(ANTHROPIC_PATH) else base + ANTHROPIC_PATH
