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
or whose credentials are not a key sent along (Azure, Bedrock, Vertex, SageMaker). Which
provider is which, and its variables and hosts, is agent/llm/providers.py's table.

Pure: the environment comes in as a mapping; both clients apply the answer, the fast path in
agent/llm/fast.py and litellm in agent/llm/litellm_stream.py (litellm reads a provider's
variable itself when given no key, so it is handed WITHHELD_KEY instead, which authenticates
nowhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent.llm.providers import PROVIDERS, lookup, provider_of

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
            variable = (lookup(provider_of(model)).key_variables or ("the provider's API key variable",))[0]
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
        ((name, environ[name].strip()) for name in lookup(provider).key_variables if environ.get(name, "").strip()),
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
    facts = lookup(provider)
    own = set(facts.hosts)
    own |= {_host(environ.get(name, "")) for name in facts.base_variables}
    own.discard("")
    if host in own:
        return True
    others = {h for p in PROVIDERS if p.name != provider for h in p.hosts}
    return facts.addressed_by_user and host not in others


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
