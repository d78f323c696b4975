"""agent/llm/cost_map.py answers what litellm answers, without importing litellm.

Windows and prices are compared with `litellm.get_model_info`, request costs (prompt
caching included) with `litellm.cost_per_token`, both on the same bundled cost map
(LITELLM_LOCAL_MODEL_COST_MAP=True, as agent/llm/offline.py sets it).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from agent.llm import cost_map
from agent.llm.offline import import_litellm

REPO = Path(__file__).resolve().parents[2]

# The models cairn defaults to (agent/llm/models.py) and the shapes people type for them.
MODELS = [
    "anthropic/claude-sonnet-4-5",
    "claude-sonnet-4-5",
    "claude-sonnet-4-5-20250929",
    "openai/gpt-5.1",
    "gpt-5",
    "gpt-4o-mini-2024-07-18",
    "ft:gpt-4o-2024-08-06:my-org::abc123",
    "gemini/gemini-2.5-pro",
    "gemini/gemini-2.5-flash-001",  # a version suffix the map does not key on
    "deepseek/deepseek-chat",
    "mistral/mistral-large-latest",
    "openrouter/anthropic/claude-sonnet-4.5",  # not in the map: the Claude capability rule, unpriced
    "anthropic/claude-opus-4-1",  # same
    "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
    "bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0",
    "bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0",
    "vertex_ai/gemini-2.5-pro",
    "vertex_ai/claude-sonnet-4-5",
    "azure/gpt-4o",
    "xai/grok-4.3",
    "ollama/llama3",
    "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo",
]
UNKNOWN = ["openai/fake-model", "fake-model", "groq/not-a-model", "openrouter/openai/gpt-4o", "xai/grok-4-0709"]


@pytest.fixture(scope="module")
def litellm():
    return import_litellm()


@pytest.mark.parametrize("model", MODELS)
def test_model_info_matches_litellm(litellm, model):
    expected = litellm.get_model_info(model)
    info = cost_map.model_info(model)
    assert info is not None
    assert info.key == expected["key"]
    assert info.litellm_provider == expected["litellm_provider"]
    assert info.max_input_tokens == expected["max_input_tokens"]
    assert info.max_output_tokens == expected["max_output_tokens"]
    assert info.max_tokens == expected["max_tokens"]
    # litellm reports a missing price as 0; the cost map says None (unpriced, not free).
    assert (info.input_cost_per_token or 0) == expected["input_cost_per_token"]
    assert (info.output_cost_per_token or 0) == expected["output_cost_per_token"]
    assert info.cache_read_input_token_cost == expected["cache_read_input_token_cost"]
    assert info.cache_creation_input_token_cost == expected["cache_creation_input_token_cost"]
    assert info.supports_prompt_caching == expected["supports_prompt_caching"]


@pytest.mark.parametrize("model", UNKNOWN)
def test_unknown_models_are_unknown_to_both(litellm, model):
    with pytest.raises(Exception):  # noqa: B017 - litellm raises a bare Exception for an unknown model
        litellm.get_model_info(model)
    assert cost_map.model_info(model) is None
    assert cost_map.request_cost(model, prompt_tokens=100, completion_tokens=10) is None


def test_every_chat_model_of_the_main_providers_resolves_like_litellm(litellm):
    """Each chat entry of the providers cairn suggests, bare and with its provider prefix.

    (Not Azure: litellm routes `azure/<non-OpenAI model>` to "openai" and then finds no
    entry for it; the cost map returns the `azure/…` entry.)"""
    cmap = cost_map.load_cost_map()
    providers = {
        "anthropic",
        "openai",
        "gemini",
        "deepseek",
        "mistral",
        "bedrock",
        "vertex_ai-language-models",
        "vertex_ai-anthropic_models",
        "xai",
        "openrouter",
    }
    names = []
    for key, entry in cmap.entries.items():
        provider = entry.get("litellm_provider")
        if entry.get("mode") != "chat" or provider not in providers:
            continue
        names.append(key)
        if "/" not in key and provider in ("anthropic", "openai", "deepseek", "mistral", "xai"):
            names.append(f"{provider}/{key}")
    assert len(names) > 300
    wrong = []
    for name in names:
        info = cost_map.model_info(name)
        try:
            expected = litellm.get_model_info(name)
        except Exception:
            expected = None
        got = (
            None
            if info is None
            else (
                info.key,
                info.max_input_tokens,
                info.max_output_tokens,
                info.input_cost_per_token or 0,
                info.cache_read_input_token_cost,
            )
        )
        want = (
            None
            if expected is None
            else (
                expected["key"],
                expected["max_input_tokens"],
                expected["max_output_tokens"],
                expected["input_cost_per_token"],
                expected["cache_read_input_token_cost"],
            )
        )
        if got != want:
            wrong.append((name, got, want))
    assert wrong == []


# prompt_tokens counts cache reads and writes too (litellm's normalised usage).
USAGES = [
    (1_000, 0, 0, 0),
    (1_000, 200, 0, 0),
    (10_000, 500, 8_000, 0),
    (10_000, 500, 0, 9_000),
    (10_000, 500, 6_000, 3_000),
    (250_000, 2_000, 200_000, 40_000),  # over the 200k tier of Claude and Gemini
    (300_000, 1_000, 0, 0),
]


@pytest.mark.parametrize(
    "model",
    [
        "anthropic/claude-sonnet-4-5",
        "claude-haiku-4-5",
        "openai/gpt-5.1",
        "gpt-4o",
        "gpt-5.4",
        "gemini/gemini-2.5-pro",
        "deepseek/deepseek-chat",
    ],
)
@pytest.mark.parametrize("usage", USAGES)
def test_request_cost_matches_litellm(litellm, model, usage):
    prompt, completion, read, write = usage
    want_in, want_out = litellm.cost_per_token(
        model=model,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read_input_tokens=read,
        cache_creation_input_tokens=write,
    )
    cost = cost_map.request_cost(
        model, prompt_tokens=prompt, completion_tokens=completion, cache_read_tokens=read, cache_write_tokens=write
    )
    assert cost is not None
    assert math.isclose(cost.input, want_in, rel_tol=1e-9, abs_tol=1e-15)
    assert math.isclose(cost.output, want_out, rel_tol=1e-9, abs_tol=1e-15)
    assert math.isclose(cost.total, want_in + want_out, rel_tol=1e-9, abs_tol=1e-15)
    assert (
        cost_map.input_cost(model, prompt_tokens=prompt, cache_read_tokens=read, cache_write_tokens=write) == cost.input
    )
    assert cost_map.completion_cost(model, prompt_tokens=prompt, completion_tokens=completion) == cost.output


def test_cache_prices_in_numbers():
    """Claude Sonnet 4.5: $3/M input, reads at a tenth, writes at 1.25×; GPT-5.1 has no write
    price (billed as input); Gemini 2.5 Pro bills every token at its higher tier past 200k."""
    sonnet = cost_map.model_info("anthropic/claude-sonnet-4-5")
    assert sonnet.context_window == 200_000 and sonnet.supports_prompt_caching
    cost = cost_map.request_cost(
        sonnet, prompt_tokens=100_000, completion_tokens=1_000, cache_read_tokens=60_000, cache_write_tokens=10_000
    )
    assert cost.input == pytest.approx(30_000 * 3e-6 + 60_000 * 0.3e-6 + 10_000 * 3.75e-6)
    assert cost.output == pytest.approx(1_000 * 15e-6)
    gpt = cost_map.model_info("openai/gpt-5.1")
    assert gpt.cache_creation_input_token_cost is None
    assert gpt.rates(1_000).cache_write == gpt.input_cost_per_token
    gemini = cost_map.model_info("gemini/gemini-2.5-pro")
    assert gemini.rates(200_000).input == 1.25e-6 and gemini.rates(200_001).input == 2.5e-6
    assert gemini.rates(200_001).cache_read == 2.5e-7 and gemini.rates(200_001).output == 15e-6


def test_generalized_models_have_a_window_but_no_price():
    info = cost_map.model_info("openrouter/anthropic/claude-sonnet-4.5")
    assert info.context_window == 200_000 and info.litellm_provider == "openrouter"
    assert not info.priced
    assert cost_map.request_cost(info, prompt_tokens=1_000) is None


def test_model_limits_reads_the_cost_map():
    from agent.llm.models import model_limits
    from agent.settings.schema import Settings

    limits = model_limits(Settings(), "gemini/gemini-2.5-pro")
    assert limits.from_litellm and limits.context_window == 1_048_576 and limits.max_output_tokens == 65_536
    unknown = model_limits(Settings(), "openai/fake-model")
    assert not unknown.from_litellm and unknown.context_window == Settings().context.default_context_window


SCRIPT = """
import json, sys
from agent.llm import cost_map
from agent.llm.models import model_limits
from agent.settings.schema import Settings
info = cost_map.model_info("anthropic/claude-sonnet-4-5")
cost = cost_map.request_cost("openai/gpt-5.1", prompt_tokens=1000, completion_tokens=10, cache_read_tokens=500)
limits = model_limits(Settings(), "deepseek/deepseek-chat")
print(json.dumps({"window": info.context_window, "cost": cost.total, "limits": limits.context_window,
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai"))}))
"""


def test_no_litellm_import():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["loaded"] == []
    assert result["window"] == 200_000 and result["limits"] == 131_072 and result["cost"] > 0
