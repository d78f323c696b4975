"""Which models `/model` offers: a custom server's own, then those of providers a key is set
for, with their windows.

With a custom `api_base` the server is asked what it serves (`GET {base}/models`, the
OpenAI-compatible list, agent/llm/models.py `server_models`, a bounded wait): its models come
first, all of them, named for the current model's provider (`openai/<id>`), and the price
map's models of that provider are left out: they would be sent to the same server, which
does not serve them (the picker listed OpenAI's 98 public models for a local server). A server
that does not answer leaves the price map's list, and the picker says so.

The rest is read from litellm's bundled price map through agent/llm/cost_map.py (a JSON file,
no litellm import), so the picker opens fast even before the backend loaded. A key counts
when the user set it (the environment, or cairn's own api_key for the current model's
provider); nothing is asked of a provider.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from agent.llm.providers import KEY_VARIABLES

# The providers `/model` lists models of, each with the variables litellm reads its key from
# (agent/llm/keys.py holds the names for every provider cairn knows).
PICKER_PROVIDERS = (
    "anthropic",
    "openai",
    "gemini",
    "mistral",
    "deepseek",
    "openrouter",
    "groq",
    "xai",
    "together_ai",
    "fireworks_ai",
    "cerebras",
)
PROVIDER_KEY_VARIABLES: dict[str, tuple[str, ...]] = {p: KEY_VARIABLES[p] for p in PICKER_PROVIDERS}
CHAT_MODE = "chat"  # the map also lists embedding, image and audio models


@dataclass(frozen=True)
class ModelChoice:
    model: str  # the litellm model string, provider first
    window: int | None


def providers_with_keys(
    environ: Mapping[str, str], current_model: str | None = None, own_key: bool = False
) -> set[str]:
    found = {p for p, names in PROVIDER_KEY_VARIABLES.items() if any(environ.get(n) for n in names)}
    if own_key and current_model and "/" in current_model:
        found.add(current_model.split("/", 1)[0])  # cairn's api_key is sent to the current provider
    return found


def model_choices(providers: set[str]) -> list[ModelChoice]:
    """Every chat model of those providers the map lists, sorted; [] without litellm."""
    from agent.llm.cost_map import load_cost_map

    cmap = load_cost_map()
    if cmap is None or not providers:
        return []
    seen: dict[str, ModelChoice] = {}
    for key, info in cmap.entries.items():
        provider = info.get("litellm_provider")
        if provider not in providers or info.get("mode") != CHAT_MODE:
            continue
        model = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        window = info.get("max_input_tokens") or info.get("max_tokens")
        seen.setdefault(model, ModelChoice(model, window if isinstance(window, int) else None))
    return sorted(seen.values(), key=lambda c: c.model)


def available_models(
    current_model: str | None, own_key: bool, environ: Mapping[str, str] | None = None
) -> list[ModelChoice]:
    env = os.environ if environ is None else environ
    return model_choices(providers_with_keys(env, current_model, own_key))


def with_known_windows(choices: list[ModelChoice], windows: Mapping[str, int]) -> list[ModelChoice]:
    """`choices` with the windows the models' own servers reported (a local llama.cpp or
    Ollama model is in no price map): theirs replace the map's, and such a model is offered
    even without a provider key."""
    by_model = {c.model: c for c in choices}
    for model, tokens in windows.items():
        by_model[model] = ModelChoice(model, tokens)
    return sorted(by_model.values(), key=lambda c: c.model)


@dataclass(frozen=True)
class Offered:
    """What the picker lists and how it titles the list."""

    choices: list[ModelChoice]
    title: str


def served_first(
    served: list[tuple[str, int | None]] | None, catalogue: list[ModelChoice], current: str | None, api_base: str
) -> Offered:
    """The server's models (None: it did not answer), then the catalogue's of other providers;
    the current model is always offered."""
    if served is None:
        note = f" (the server at {api_base} did not list its models)" if api_base else ""
        return Offered(catalogue, f"Choose a model — {len(catalogue)} with a key set{note}")
    provider = current.split("/", 1)[0] if current and "/" in current else "openai"
    own = [
        ModelChoice(name if name.startswith(f"{provider}/") else f"{provider}/{name}", window)
        for name, window in served
    ]
    names = {c.model for c in own}
    if current and current not in names:
        own.insert(0, ModelChoice(current, None))
        names.add(current)
    others = [c for c in catalogue if not c.model.startswith(f"{provider}/") and c.model not in names]
    more = f" · {len(others)} more with a key set" if others else ""
    return Offered([*own, *others], f"Choose a model — {len(served)} served by {api_base}{more}")
