"""Which key a request may carry: a key goes only where the user sent it.

The user names an address and a key in two ways. `api_base` and `api_key` (flag, CAIRN_*
variable or config) are one address and the key they gave for it: that key goes to that
address, whatever the model. A provider's own variable (ANTHROPIC_API_KEY, GEMINI_API_KEY…)
is a key for that provider: it goes to that provider's own address (its public endpoint, or
the base URL in its own variable, ANTHROPIC_BASE_URL) and nowhere else. So with an `api_base`
set and no `api_key`, a request for `anthropic/…` (a /model switch, a subagent's definition,
a condense on another model) is not given ANTHROPIC_API_KEY to post to the user's
OpenAI-compatible server: cairn says which key is missing instead.

Two kinds of provider have no address of their own, so a custom `api_base` is theirs: the
OpenAI-compatible protocol (OPENAI_API_KEY with OPENAI_BASE_URL or `--api-base` is how every
OpenAI-compatible server and proxy is addressed) and the self-hosted servers litellm knows by
name (vLLM, Ollama, LM Studio…), plus the clouds whose `api_base` is the user's own resource
or whose credentials are not a key sent along (Azure, Bedrock, Vertex, SageMaker).

Pure: the environment comes in as a mapping; agent/llm/client.py applies the answer to both
clients (litellm reads a provider's variable itself when given no key, so it is handed
WITHHELD_KEY instead, which authenticates nowhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

# The variable each provider's key is read from (litellm's names for its providers).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere": ("COHERE_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
}
# A provider's own address: its public endpoint's host, and the variables that move it.
OWN_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("api.openai.com",),
    "anthropic": ("api.anthropic.com",),
    "gemini": ("generativelanguage.googleapis.com",),
    "mistral": ("api.mistral.ai",),
    "deepseek": ("api.deepseek.com",),
    "openrouter": ("openrouter.ai",),
    "groq": ("api.groq.com",),
    "xai": ("api.x.ai",),
    "cohere": ("api.cohere.ai", "api.cohere.com"),
    "cohere_chat": ("api.cohere.ai", "api.cohere.com"),
    "together_ai": ("api.together.xyz",),
    "fireworks_ai": ("api.fireworks.ai",),
    "perplexity": ("api.perplexity.ai",),
    "deepinfra": ("api.deepinfra.com",),
    "cerebras": ("api.cerebras.ai",),
}
OWN_BASE_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
    "gemini": ("GEMINI_API_BASE",),
    "mistral": ("MISTRAL_API_BASE",),
    "deepseek": ("DEEPSEEK_API_BASE",),
    "openrouter": ("OPENROUTER_API_BASE",),
    "groq": ("GROQ_API_BASE",),
    "xai": ("XAI_API_BASE",),
}
# Providers whose address is whatever the user gives (module docstring).
ADDRESSED_BY_USER = frozenset(
    [
        "openai",
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
        "azure",
        "azure_text",
        "azure_ai",
        "bedrock",
        "bedrock_converse",
        "sagemaker",
        "sagemaker_chat",
        "vertex_ai",
        "vertex_ai_beta",
    ]
)
# What litellm is given instead of a key that may not go where the request goes.
WITHHELD_KEY = "cairn-withheld-key"


@dataclass(frozen=True)
class KeyChoice:
    key: str | None  # what the request carries; None: none (the provider's variable is unset, or withheld)
    # False: no key of the provider's own may go to this address (litellm must not look one up).
    own_key_allowed: bool = True
    withheld: str | None = None  # the provider's variable that is set but may not go to this address

    def missing_key_message(self, model: str, api_base: str | None) -> str:
        """Why a request has no key, for the user."""
        if self.withheld is None or not api_base:
            variable = (KEY_VARIABLES.get(provider_of(model)) or ("the provider's API key variable",))[0]
            return f"No API key for {model}: set {variable} (or pass --api-key)."
        where = shown_base(api_base) or "the api_base you set"
        return (
            f"No API key for {model} at {where}: {self.withheld} goes only to its own "
            f"provider's address, not to the api_base you set. Give the key for that address with "
            f"--api-key (or api_key in config), or leave api_base unset to use the provider's own."
        )


def choose_key(provider: str, *, api_base: str | None, api_key: str | None, environ: Mapping[str, str]) -> KeyChoice:
    """The key a request for `provider`'s model may carry to `api_base` (None: the provider's own
    address, as its variables say)."""
    if api_key and api_key.strip():
        return KeyChoice(api_key.strip())
    found = next(
        ((name, environ[name].strip()) for name in KEY_VARIABLES.get(provider, ()) if environ.get(name, "").strip()),
        None,
    )
    if not custom_base(api_base) or may_carry_own_key(provider, api_base or "", environ):
        return KeyChoice(found[1] if found else None)
    return KeyChoice(None, own_key_allowed=False, withheld=found[0] if found else None)


def custom_base(api_base: str | None) -> bool:
    return bool(api_base and api_base.strip())


def may_carry_own_key(provider: str, api_base: str, environ: Mapping[str, str]) -> bool:
    """A request to `api_base` may carry `provider`'s own key: `api_base` is that provider's own
    address (its public host, or its own base variable's host), or the provider has no address
    of its own and `api_base` is not another provider's."""
    host = _host(api_base)
    if not host:
        return False
    own = set(OWN_HOSTS.get(provider, ()))
    own |= {_host(environ.get(name, "")) for name in OWN_BASE_VARIABLES.get(provider, ())}
    own.discard("")
    if host in own:
        return True
    others = {h for name, hosts in OWN_HOSTS.items() if name != provider for h in hosts}
    return provider in ADDRESSED_BY_USER and host not in others


def provider_of(model: str) -> str:
    """The provider a model string names: its prefix; a bare name is OpenAI's, or Anthropic's
    for `claude…` (how agent/llm/route.py and litellm place them)."""
    head, sep, _ = model.strip().partition("/")
    if sep:
        return head.lower()
    return "anthropic" if model.strip().lower().startswith("claude") else "openai"


def shown_base(api_base: str) -> str | None:
    """The address for a message: scheme, host, port and path (never a query or password);
    None when it does not parse as one (each message says so its own way)."""
    try:
        parts = urlsplit(api_base.strip())
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return None
    return f"{parts.scheme}://{netloc}{parts.path}" if parts.scheme and netloc else None


def _host(url: str) -> str:
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""
