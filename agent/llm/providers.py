"""What cairn knows about each model provider, in one table.

A provider's facts (the variables its key and its address are read from, its own public
host, the bare model names that are its, which wire protocol the fast path speaks to it,
whether its streams always end with a finish reason, the model a key of its picks) are read
by the key rule (agent/llm/keys.py), the router (agent/llm/route.py), the error messages
(agent/llm/error_map.py), the litellm client (agent/llm/litellm_stream.py), the default model
(agent/llm/models.py), a subagent's model (agent/subagents/models.py) and the `/model`
picker. They were copied into several of those; a provider added or corrected here is so
everywhere. The names are litellm's (its provider prefixes, the variables it reads).

Standard library only: asked before anything heavy is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

# The wire protocols the fast path speaks itself (agent/llm/openai_wire.py, anthropic_wire.py).
WireName = Literal["openai", "anthropic"]
# The provider a model string is taken to be for when nothing places it (litellm's default).
DEFAULT_PROVIDER = "openai"


@dataclass(frozen=True)
class Provider:
    name: str  # litellm's prefix: `anthropic/claude-…`
    key_variables: tuple[str, ...] = ()  # where its key is read from; the first is named in messages
    hosts: tuple[str, ...] = ()  # its own public API's hosts; the first is named in messages
    base_variables: tuple[str, ...] = ()  # the variables that move its address (litellm's names)
    bare_prefixes: tuple[str, ...] = ()  # model names without a prefix that are its ("gpt-", "claude")
    # No address of its own, so a custom api_base is its (agent/llm/keys.py's module docstring).
    addressed_by_user: bool = False
    always_finishes: bool = False  # its streams always end with a finish reason: one without was cut
    wire: WireName | None = None  # the fast path's protocol for it (agent/llm/route.py); None: litellm
    default_base: str = ""  # the fast path's base URL when neither api_base nor a variable gives one
    default_model: str = ""  # with no model configured, a key of its picks this one (agent/llm/models.py)


# In the order a set key picks the default model.
PROVIDERS: tuple[Provider, ...] = (
    Provider(
        "anthropic",
        key_variables=("ANTHROPIC_API_KEY",),
        hosts=("api.anthropic.com",),
        base_variables=("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
        bare_prefixes=("claude",),
        always_finishes=True,
        wire="anthropic",
        default_base="https://api.anthropic.com",
        default_model="anthropic/claude-sonnet-4-5",
    ),
    Provider(
        "openai",
        key_variables=("OPENAI_API_KEY",),
        hosts=("api.openai.com",),
        base_variables=("OPENAI_BASE_URL", "OPENAI_API_BASE"),
        # OpenAI's models litellm places without a prefix (its own list names more; these are
        # the families people type).
        bare_prefixes=("gpt-", "chatgpt-", "o1", "o3", "o4"),
        addressed_by_user=True,  # how every OpenAI-compatible server and proxy is addressed
        always_finishes=True,
        wire="openai",
        default_base="https://api.openai.com/v1",
        default_model="openai/gpt-5.1",
    ),
    Provider(
        "gemini",
        key_variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        hosts=("generativelanguage.googleapis.com",),
        base_variables=("GEMINI_API_BASE",),
        default_model="gemini/gemini-2.5-pro",
    ),
    Provider(
        "mistral",
        key_variables=("MISTRAL_API_KEY",),
        hosts=("api.mistral.ai",),
        base_variables=("MISTRAL_API_BASE",),
        default_model="mistral/mistral-large-latest",
    ),
    Provider(
        "deepseek",
        key_variables=("DEEPSEEK_API_KEY",),
        hosts=("api.deepseek.com",),
        base_variables=("DEEPSEEK_API_BASE",),
        default_model="deepseek/deepseek-chat",
    ),
    Provider(
        "openrouter",
        key_variables=("OPENROUTER_API_KEY",),
        hosts=("openrouter.ai",),
        base_variables=("OPENROUTER_API_BASE",),
        default_model="openrouter/anthropic/claude-sonnet-4.5",
    ),
    Provider("groq", key_variables=("GROQ_API_KEY",), hosts=("api.groq.com",), base_variables=("GROQ_API_BASE",)),
    Provider("xai", key_variables=("XAI_API_KEY",), hosts=("api.x.ai",), base_variables=("XAI_API_BASE",)),
    Provider("cohere", key_variables=("COHERE_API_KEY",), hosts=("api.cohere.ai", "api.cohere.com")),
    Provider("cohere_chat", key_variables=("COHERE_API_KEY",), hosts=("api.cohere.ai", "api.cohere.com")),
    Provider(
        "together_ai",
        key_variables=("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
        hosts=("api.together.xyz",),
    ),
    Provider("fireworks_ai", key_variables=("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"), hosts=("api.fireworks.ai",)),
    Provider("perplexity", key_variables=("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"), hosts=("api.perplexity.ai",)),
    Provider("deepinfra", key_variables=("DEEPINFRA_API_KEY",), hosts=("api.deepinfra.com",)),
    Provider("cerebras", key_variables=("CEREBRAS_API_KEY",), hosts=("api.cerebras.ai",)),
    # The self-hosted servers litellm knows by name, and the clouds whose api_base is the
    # user's own resource or whose credentials are not a key sent along.
    *(
        Provider(name, addressed_by_user=True)
        for name in (
            "custom_openai",
            "openai_like",
            "text-completion-openai",
            "hosted_vllm",
            "vllm",
            "ollama",
            "ollama_chat",
            "llamafile",
            "lm_studio",
            "llama_cpp",
            "xinference",
            "docker_model_runner",
            "litellm_proxy",
            "oobabooga",
        )
    ),
    Provider("azure", addressed_by_user=True, always_finishes=True),
    *(
        Provider(name, addressed_by_user=True)
        for name in (
            "azure_text",
            "azure_ai",
            "bedrock",
            "bedrock_converse",
            "sagemaker",
            "sagemaker_chat",
            "vertex_ai",
            "vertex_ai_beta",
        )
    ),
)
BY_NAME: Mapping[str, Provider] = MappingProxyType({p.name: p for p in PROVIDERS})
# Views of the table by name, for what reads one fact of every provider.
KEY_VARIABLES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {p.name: p.key_variables for p in PROVIDERS if p.key_variables}
)
OWN_HOSTS: Mapping[str, tuple[str, ...]] = MappingProxyType({p.name: p.hosts for p in PROVIDERS if p.hosts})
ADDRESSED_BY_USER = frozenset(p.name for p in PROVIDERS if p.addressed_by_user)


def lookup(name: str) -> Provider:
    """The provider called `name`; one cairn knows nothing of has no facts."""
    return BY_NAME.get(name) or Provider(name)


def bare_provider(model: str) -> Provider | None:
    """The provider a model name without a `provider/` prefix is placed at, if any."""
    lowered = model.lower()
    return next((p for p in PROVIDERS if p.bare_prefixes and lowered.startswith(p.bare_prefixes)), None)


def named_provider(model: str) -> str:
    """The provider a model string names: its `provider/` prefix, or for a bare name the one the
    clients place it at; "" when nothing says (a subagent's model is then never taken to be
    the parent's provider)."""
    head, sep, _ = model.strip().partition("/")
    if sep:
        return head.lower()
    placed = bare_provider(model.strip())
    return placed.name if placed is not None else ""


def provider_of(model: str) -> str:
    """The provider a model string is for, as the messages name it: a bare name nothing places
    is taken to be OpenAI's (as litellm takes it)."""
    return named_provider(model) or DEFAULT_PROVIDER
