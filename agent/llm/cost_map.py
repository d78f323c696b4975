"""Model windows and prices from litellm's bundled cost map, without importing litellm.

`import litellm` costs 2-4 s of CPU; `cairn context`, the status line and the cost
figures only need a few numbers from one JSON file litellm ships
(`model_prices_and_context_window_backup.json`, the map litellm itself loads when
`LITELLM_LOCAL_MODEL_COST_MAP=True`, as agent/llm/offline.py sets). The package folder is
found with `importlib.util.find_spec` (which does not import it) and the file is parsed
once per process (~30 ms), on first use.

Model strings resolve the way `litellm.get_model_info(model)` resolves them for chat
models: the exact key, then the name without its provider prefix when the entry's
`litellm_provider` matches (`anthropic/claude-sonnet-4-5` → `claude-sonnet-4-5`), then
the name without a dated / version / fine-tune / Bedrock region suffix
(`gemini/gemini-2.5-flash-001` → `gemini/gemini-2.5-flash`), case-insensitively; a model
no key matches gets the map's capability rules (`fallback_generalizations`: e.g. every
`claude-<family>-<n>` has a 200k window), unpriced. tests/llm/test_cost_map.py checks the
answers against litellm's own. Not mirrored: dynamic provider lookups (Ollama servers,
Hugging Face configs), Azure/Vertex name aliases, Dashscope `tiered_pricing`, off-peak
and service-tier prices, 1-hour cache writes.

Prices follow litellm's convention (`generic_cost_per_token`): `prompt_tokens` counts
every input token, cache reads and cache writes included (litellm normalises Anthropic's
usage that way); the uncached rest is billed at the input rate, reads at
`cache_read_input_token_cost`, writes at `cache_creation_input_token_cost` — each falling
back to the input rate when the map has no such price — and a prompt over a
`*_above_<N>k_tokens` threshold bills every token at that tier's rates.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

COST_MAP_FILE = "model_prices_and_context_window_backup.json"
# litellm's provider list (its `provider_list` is an enum we cannot read without the import).
PROVIDERS_FILE = "provider_endpoints_support_backup.json"
_RESERVED_KEYS = frozenset({"sample_spec", "fallback_generalizations"})
_PRICE_KEYS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
)
_TIER_KEY = re.compile(rf"^({'|'.join(_PRICE_KEYS)})_above_(\d+(?:\.\d+)?)(k?)_tokens$")
_INCLUSIVE_THRESHOLD_PROVIDERS = frozenset({"xai"})  # billed at the higher tier from the threshold on
_DATED_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")
_VERSION_SUFFIX = re.compile(r"-\d+$")
_FINETUNE_SUFFIX = re.compile(r"(:[^:]*){3}$")
_BEDROCK_ROUTES = ("bedrock/", "chat_completions/", "converse/", "invoke/", "openai/", "mantle/", "nova-2/", "nova/")
_BEDROCK_CROSS_REGION = frozenset({"global", "us", "eu", "apac", "jp", "au", "us-gov"})
_AWS_REGION = re.compile(r"^[a-z]{2}(?:-gov)?-[a-z]+-\d+$")


@dataclass(frozen=True, slots=True)
class PriceTier:
    """Rates for a prompt of more than `above_tokens` tokens (None: the lower tier's rate applies)."""

    above_tokens: float
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    cache_read_input_token_cost: float | None = None
    cache_creation_input_token_cost: float | None = None


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token for one request, every fallback resolved."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True, slots=True)
class ModelPrices:
    """One cost-map entry, as `litellm.get_model_info` reports it. A price is None when the
    map has none (litellm reports 0): such a model is unpriced, not free."""

    key: str  # the cost-map key the model resolved to
    litellm_provider: str | None
    max_input_tokens: int | None
    max_output_tokens: int | None
    max_tokens: int | None  # legacy: the output limit, or the window when nothing else is given
    input_cost_per_token: float | None
    output_cost_per_token: float | None
    cache_read_input_token_cost: float | None
    cache_creation_input_token_cost: float | None
    supports_prompt_caching: bool | None
    tiers: tuple[PriceTier, ...] = ()  # ascending thresholds
    supports_vision: bool | None = None  # takes images in user messages (None: the map does not say)
    supports_pdf_input: bool | None = None  # takes PDF documents (agent/documents.py)
    # Reasoning (agent/llm/reasoning.py): whether the model thinks, and which efforts it takes.
    supports_reasoning: bool | None = None
    supports_none_reasoning_effort: bool | None = None
    supports_minimal_reasoning_effort: bool | None = None
    web_search_cost_per_query: float | None = None  # a provider-run search (agent/llm/server_search.py)

    @property
    def context_window(self) -> int | None:
        return self.max_input_tokens or self.max_tokens

    @property
    def priced(self) -> bool:
        return self.input_cost_per_token is not None or self.output_cost_per_token is not None

    def rates(self, prompt_tokens: int) -> Rates:
        """The rates a request with `prompt_tokens` input tokens (cached ones included) pays."""
        inclusive = self.litellm_provider in _INCLUSIVE_THRESHOLD_PROVIDERS
        rate_in, rate_out = self.input_cost_per_token or 0.0, self.output_cost_per_token or 0.0
        read, write = self.cache_read_input_token_cost, self.cache_creation_input_token_cost
        for tier in self.tiers:
            if prompt_tokens > tier.above_tokens or (inclusive and prompt_tokens == tier.above_tokens):
                rate_in = _or(tier.input_cost_per_token, rate_in)
                rate_out = _or(tier.output_cost_per_token, rate_out)
                read = _or(tier.cache_read_input_token_cost, read)
                write = _or(tier.cache_creation_input_token_cost, write)
        return Rates(input=rate_in, output=rate_out, cache_read=_or(read, rate_in), cache_write=_or(write, rate_in))


@dataclass(frozen=True, slots=True)
class RequestCost:
    input: float  # uncached input + cache reads + cache writes, USD
    output: float

    @property
    def total(self) -> float:
        return self.input + self.output


def _or(value: float | None, default: float | None) -> Any:
    return default if value is None else value


# -- the map ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern
    model_info: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CostMap:
    """The parsed file: read-only after load (it is shared by everything in the process)."""

    entries: Mapping[str, Mapping[str, Any]]
    lowercase: Mapping[str, str]  # lower-cased key → key, for litellm's case-insensitive fallback
    providers: frozenset[str]
    routing: tuple[tuple[re.Pattern, str], ...]  # bare id → provider, first match wins
    capabilities: tuple[_Rule, ...]  # unmapped id → union of every matching rule's facts

    def key_for(self, name: str) -> str | None:
        if name in self.entries:
            return name
        return self.lowercase.get(name.lower())


def litellm_folder() -> Path | None:
    """litellm's package folder, found without importing it."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


@functools.cache
def load_cost_map() -> CostMap | None:
    """The cost map, parsed once per process (an immutable resource); None without litellm."""
    folder = litellm_folder()
    if folder is None:
        return None
    try:
        raw = json.loads((folder / COST_MAP_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    return _build(raw, _provider_names(folder))


def _provider_names(folder: Path) -> set[str]:
    try:
        providers = json.loads((folder / PROVIDERS_FILE).read_bytes()).get("providers") or {}
    except (OSError, ValueError, AttributeError):
        return set()
    return {p for p in providers if isinstance(p, str)}


def _build(raw: dict[str, Any], providers: set[str]) -> CostMap:
    entries: dict[str, Mapping[str, Any]] = {}
    for key, info in raw.items():
        if key in _RESERVED_KEYS or not isinstance(info, dict):
            continue
        entries[key] = MappingProxyType(info)
        if isinstance(info.get("litellm_provider"), str):
            providers.add(info["litellm_provider"])
    for info in list(entries.values()):  # litellm's `aliases`: extra keys for the same entry
        for alias in info.get("aliases") or ():
            if isinstance(alias, str) and alias not in entries:
                entries[alias] = info
    routing, capabilities = _rules(raw.get("fallback_generalizations"))
    return CostMap(
        entries=MappingProxyType(entries),
        lowercase=MappingProxyType({k.lower(): k for k in entries}),
        providers=frozenset(providers),
        routing=routing,
        capabilities=capabilities,
    )


def _rules(block: Any) -> tuple[tuple[tuple[re.Pattern, str], ...], tuple[_Rule, ...]]:
    """litellm's fallback_generalizations: a rule with only `litellm_provider` routes a bare id;
    one without it carries facts for unmapped ids (a legacy rule with both is both)."""
    rules = block.get("rules") if isinstance(block, dict) else None
    routing: list[tuple[re.Pattern, str]] = []
    capabilities: list[_Rule] = []
    for rule in rules if isinstance(rules, list) else ():
        info = rule.get("model_info") if isinstance(rule, dict) else None
        if not isinstance(info, dict) or not isinstance(rule.get("pattern"), str):
            continue
        try:
            pattern = re.compile(rule["pattern"], re.IGNORECASE)
        except re.error:
            continue
        provider = info.get("litellm_provider")
        if "litellm_provider" in info and not isinstance(provider, str):
            continue
        if isinstance(provider, str):
            routing.append((pattern, provider))
        if set(info) - {"litellm_provider"}:
            capabilities.append(_Rule(pattern, MappingProxyType(info)))
    return tuple(routing), tuple(capabilities)


# -- resolving a model string ----------------------------------------------------------------------
def _provider_matches(info: Mapping[str, Any], provider: str | None) -> bool:
    """litellm's `_check_provider_match`: does an entry serve a request routed to `provider`?"""
    entry = info.get("litellm_provider")
    if not provider or entry is None or entry == provider:
        return True
    return (
        (provider == "vertex_ai" and entry.startswith("vertex_ai"))
        or (provider == "fireworks_ai" and entry.startswith("fireworks_ai"))
        or (provider.startswith("bedrock") and entry.startswith("bedrock"))
        or provider in ("litellm_proxy", "github", "nadir")
        or (provider == "azure_ai" and entry in ("azure", "openai"))
    )


def _strip_bedrock_routes(model: str) -> str:
    for prefix in _BEDROCK_ROUTES:
        if model.startswith(prefix):
            model = model.split("/", 1)[1]
    return model


def _bedrock_base(model: str) -> str:
    """`bedrock/us.anthropic.claude-…-v2:0` → `anthropic.claude-…-v2:0` (litellm's get_bedrock_base_model)."""
    model = _strip_bedrock_routes(model)
    if "arn" in model.lower():
        model = model.split("/")[-1]
    model = re.sub(r"\[\w+\]$", "", re.sub(r"(:\d+):\d+k$", r"\1", model))
    region, dot, rest = model.partition(".")
    if dot and region in _BEDROCK_CROSS_REGION:
        return rest
    region, slash, rest = model.partition("/")
    if slash and _AWS_REGION.match(region):
        return rest
    return model


def _stripped(model: str, provider: str | None) -> str:
    """litellm's `_strip_model_name`: the name without a suffix the map does not key on."""
    if provider in ("bedrock", "bedrock_converse"):
        return _bedrock_base(model)
    if provider in ("vertex_ai", "gemini", "databricks"):
        return _VERSION_SUFFIX.sub("", model)
    if "ft:" in model:
        return _FINETUNE_SUFFIX.sub("", model)
    return _DATED_SUFFIX.sub("", model)


def _route(cmap: CostMap, model: str) -> tuple[str | None, str]:
    """(provider, name without the provider prefix), as litellm's `get_llm_provider` answers."""
    prefix, slash, rest = model.partition("/")
    if slash and prefix in cmap.providers:
        return prefix, _strip_bedrock_routes(rest) if prefix in ("bedrock", "bedrock_converse") else rest
    key = cmap.key_for(model)
    if key is not None:
        return cmap.entries[key].get("litellm_provider"), model
    for pattern, provider in cmap.routing:
        if pattern.search(model):
            return provider, model
    return None, model


def _resolve(cmap: CostMap, model: str) -> tuple[str, Mapping[str, Any], str | None] | None:
    provider, split = _route(cmap, model)
    candidates = list(dict.fromkeys((model, split, _stripped(model, provider))))
    keys = [cmap.key_for(name) for name in candidates]
    for key in keys:
        if key is not None and _provider_matches(cmap.entries[key], provider):
            return key, cmap.entries[key], provider
    if any(keys):  # known under another provider: litellm does not guess from the rules then
        return None
    for name in candidates:
        facts = [rule.model_info for rule in cmap.capabilities if rule.pattern.search(name)]
        if facts:
            merged = {k: v for info in facts for k, v in info.items()}
            if provider is not None:
                merged["litellm_provider"] = provider
            return name, merged, provider
    return None


def _price(info: Mapping[str, Any], key: str) -> float | None:
    value = info.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tiers(info: Mapping[str, Any]) -> tuple[PriceTier, ...]:
    by_threshold: dict[float, dict[str, float | None]] = {}
    for name in info:
        match = _TIER_KEY.match(name)
        if match and _price(info, name) is not None:
            threshold = float(match[2]) * (1000 if match[3] else 1)
            by_threshold.setdefault(threshold, {})[match[1]] = _price(info, name)
    return tuple(PriceTier(above_tokens=t, **rates) for t, rates in sorted(by_threshold.items()))


def model_info(model: str) -> ModelPrices | None:
    """Window and prices of `model` (any litellm model string); None when the map does not know it."""
    cmap = load_cost_map()
    if cmap is None or not model:
        return None
    found = _resolve(cmap, model)
    if found is None:
        return None
    key, info, provider = found
    caching = info.get("supports_prompt_caching")
    vision = info.get("supports_vision")
    return ModelPrices(
        key=key,
        litellm_provider=info.get("litellm_provider", provider),
        max_input_tokens=_int(info.get("max_input_tokens")),
        max_output_tokens=_int(info.get("max_output_tokens")),
        max_tokens=_int(info.get("max_tokens")),
        input_cost_per_token=_price(info, "input_cost_per_token"),
        output_cost_per_token=_price(info, "output_cost_per_token"),
        cache_read_input_token_cost=_price(info, "cache_read_input_token_cost"),
        cache_creation_input_token_cost=_price(info, "cache_creation_input_token_cost"),
        supports_prompt_caching=caching if isinstance(caching, bool) else None,
        tiers=_tiers(info),
        supports_vision=vision if isinstance(vision, bool) else None,
        supports_pdf_input=_flag(info, "supports_pdf_input"),
        supports_reasoning=_flag(info, "supports_reasoning"),
        supports_none_reasoning_effort=_flag(info, "supports_none_reasoning_effort"),
        supports_minimal_reasoning_effort=_flag(info, "supports_minimal_reasoning_effort"),
        web_search_cost_per_query=_search_price(info),
    )


def _search_price(info: Mapping[str, Any]) -> float | None:
    """litellm's `search_context_cost_per_query` (per context size; the medium one)."""
    per_size = info.get("search_context_cost_per_query")
    return _price(per_size, "search_context_size_medium") if isinstance(per_size, Mapping) else None


def _flag(info: Mapping[str, Any], key: str) -> bool | None:
    value = info.get(key)
    return value if isinstance(value, bool) else None


# -- pricing a request -----------------------------------------------------------------------------
def request_cost(
    model: str | ModelPrices,
    *,
    prompt_tokens: int,
    completion_tokens: int = 0,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> RequestCost | None:
    """USD of one request; None when the model is unknown or unpriced.

    `prompt_tokens` counts every input token, cache reads and writes included (litellm's
    normalised `usage.prompt_tokens`; for Anthropic that is input_tokens +
    cache_read_input_tokens + cache_creation_input_tokens)."""
    info = model if isinstance(model, ModelPrices) else model_info(model)
    if info is None or not info.priced:
        return None
    rates = info.rates(prompt_tokens)
    read, write = max(cache_read_tokens, 0), max(cache_write_tokens, 0)
    uncached = max(prompt_tokens - read - write, 0)
    return RequestCost(
        input=uncached * rates.input + read * rates.cache_read + write * rates.cache_write,
        output=max(completion_tokens, 0) * rates.output,
    )


def input_cost(
    model: str | ModelPrices, *, prompt_tokens: int, cache_read_tokens: int = 0, cache_write_tokens: int = 0
) -> float | None:
    """USD of a request's input alone (what prompt caching changes); None when unpriced."""
    cost = request_cost(
        model, prompt_tokens=prompt_tokens, cache_read_tokens=cache_read_tokens, cache_write_tokens=cache_write_tokens
    )
    return None if cost is None else cost.input


def completion_cost(model: str | ModelPrices, *, completion_tokens: int, prompt_tokens: int = 0) -> float | None:
    """USD of a request's output (`prompt_tokens` only picks the long-context tier); None when unpriced."""
    cost = request_cost(model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return None if cost is None else cost.output
