"""Prompt caching: where a request needs cache breakpoints, and what the cache did.

Providers cache a request's prefix in one of two ways. Anthropic (and Claude served by
Bedrock, Vertex AI, Azure AI and the gateways in front of them) caches only up to blocks
the request marks with ``cache_control: {"type": "ephemeral"}``, at most 4 of them, in
prompt order tools → system → messages; OpenAI, Azure OpenAI, DeepSeek, Gemini, xAI and
most others cache a long enough prefix by themselves. ``breakpoint_style`` says which way a
model string goes, ``with_breakpoints`` marks a request for the first kind, and
``cache_tokens`` reads what was read from and written to the cache off litellm's usage.

The marks are written in OpenAI message format such that litellm 1.106.2's Anthropic
transformation (``litellm_core_utils/prompt_templates/factory.py``: ``anthropic_messages_pt``,
``convert_to_anthropic_tool_result``, ``convert_to_anthropic_tool_invoke``;
``AnthropicConfig.translate_system_message`` and ``_map_tool_helper``) puts each on the last
block of the marked message; tests/llm/test_caching.py checks the wire format against
tests/fakes/anthropic_server.py. The same marks become ``cachePoint`` blocks on Bedrock
Converse (``_bedrock_converse_messages_pt``) and move into content blocks on OpenRouter.

Pure functions, standard library only: nothing here imports litellm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

BreakpointStyle = Literal["explicit", "automatic", "none"]

# Anthropic: "A maximum of 4 blocks with cache_control may be provided."
MAX_BREAKPOINTS = 4

# Providers (the litellm prefix before the first "/") whose Claude models take Anthropic's
# cache_control marks through litellm: the providers of litellm's own
# `supports_anthropic_cache_control` (anthropic, bedrock, vertex_ai, azure_ai; Claude only),
# Bedrock's Mantle endpoint (Claude goes through AmazonAnthropicClaudeConfig), and the
# gateways whose litellm config keeps cache_control for Claude (openrouter, databricks,
# snowflake). A non-Claude model behind them is "automatic" or "none" (below).
_CLAUDE_CARRIERS = frozenset(
    {
        "anthropic",
        "bedrock",
        "bedrock_mantle",
        "vertex_ai",
        "vertex_ai_beta",
        "azure_ai",
        "openrouter",
        "databricks",
        "snowflake",
    }
)
# Providers that cache a repeated prefix without being asked (and report the hits in
# usage.prompt_tokens_details.cached_tokens or an equivalent litellm maps there).
# Gemini and Vertex AI Gemini are deliberately here and never "explicit": litellm turns
# cache_control on a Gemini request into a separately created (and billed) context cache.
# dashscope, zai and minimax keep cache_control in litellm too, but they cache implicitly
# and pass OpenAI-format marks through unconverted, so none are sent there.
_AUTOMATIC = frozenset(
    {
        "openai",
        "azure",
        "azure_ai",
        "deepseek",
        "gemini",
        "xai",
        "groq",
        "mistral",
        "fireworks_ai",
        "together_ai",
        "deepinfra",
        "moonshot",
        "dashscope",
        "zai",
        "minimax",
        "openrouter",
    }
)
# Model names litellm routes without a provider prefix.
_BARE_AUTOMATIC = ("gpt-", "chatgpt-", "o1", "o3", "o4", "gemini-", "deepseek-", "grok-")


def breakpoint_style(model: str) -> BreakpointStyle:
    """How `model` (a litellm model string) caches prompts.

    "explicit": only where the request carries cache_control breakpoints (Claude wherever
    litellm converts the marks: anthropic/…, bare claude-…, bedrock/…claude…, vertex_ai/claude…,
    azure_ai/claude…, openrouter/anthropic/…, databricks/…claude…, snowflake/claude…).
    "automatic": the provider caches a repeated prefix itself (openai/, azure/, deepseek/,
    gemini/, xai/, …); breakpoints would be stripped or misread, so none are sent.
    "none": unknown or local (ollama/, hosted_vllm/, lm_studio/, …), and models on Bedrock or
    Vertex AI other than Claude (and Gemini on Vertex, "automatic"): no caching expected.

    A prefix table rather than litellm's cost map (`supports_prompt_caching`): it must answer
    before litellm is imported, and for models newer than the map.
    """
    name = model.strip().lower()
    provider, slash, rest = name.partition("/")
    if not slash:
        provider, rest = "", name
    if "claude" in rest and (provider in _CLAUDE_CARRIERS or provider == ""):
        return "explicit"
    if provider == "openrouter" and rest.startswith("anthropic/"):
        return "explicit"
    if provider == "":
        return "automatic" if rest.startswith(_BARE_AUTOMATIC) else "none"
    if provider in ("vertex_ai", "vertex_ai_beta"):
        return "automatic" if "gemini" in rest else "none"
    return "automatic" if provider in _AUTOMATIC else "none"


def _ephemeral() -> dict[str, str]:
    # A fresh dict per mark: some litellm paths edit cache_control dicts in place.
    return {"type": "ephemeral"}


def _has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _marked_content(content: Any) -> list[Any] | None:
    """`content` with its last markable block marked, or None if it has none.

    Blank text is never marked: litellm replaces blank user/assistant text with a
    placeholder and Anthropic rejects empty text blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content, "cache_control": _ephemeral()}] if _has_text(content) else None
    if not isinstance(content, list):
        return None
    for i in range(len(content) - 1, -1, -1):
        block = content[i]
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if (kind == "text" and _has_text(block.get("text"))) or kind in ("image_url", "file", "document"):
            out = list(content)
            out[i] = {**block, "cache_control": _ephemeral()}
            return out
    return None


def _marked(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of `message` carrying one breakpoint on its last block, or None if it cannot.

    - user / system / assistant text: the last text block (a string becomes
      ``[{"type": "text", "text": …, "cache_control": …}]``);
    - assistant with tool_calls: the last tool call (``tool_calls[-1]["cache_control"]``),
      which litellm puts on the last ``tool_use`` block — after the text, so the whole
      message is in the cached prefix; the content is left alone (None stays None: an
      empty string would become litellm's placeholder text block);
    - tool: message-level ``cache_control``, which litellm puts on the ``tool_result``
      block (Bedrock: a cachePoint after it; OpenRouter: into the content).
    """
    role = message.get("role")
    if role == "assistant" and message.get("tool_calls"):
        calls = list(message["tool_calls"])
        last = calls[-1]
        if not isinstance(last, dict):
            return None
        calls[-1] = {**last, "cache_control": _ephemeral()}
        return {**message, "tool_calls": calls}
    if role in ("tool", "function"):
        content = message.get("content")
        if _has_text(content) or (isinstance(content, list) and content):
            return {**message, "cache_control": _ephemeral()}
        return None
    if role in ("system", "user", "assistant"):
        content = _marked_content(message.get("content"))
        return None if content is None else {**message, "content": content}
    return None


def can_carry(message: Mapping[str, Any]) -> bool:
    """Whether `message` has a block a breakpoint can go on (see `_marked`)."""
    return _marked(message) is not None


def with_breakpoints(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    positions: Sequence[int],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """New (messages, tools) with cache breakpoints; the inputs are not changed.

    - The system message (index 0, role "system") gets one: it ends the tools + system
      prefix (Anthropic orders tools before system), so the tools need none of their own.
      Without a system message that can carry one, the last tool gets it instead (a
      top-level ``cache_control`` on the OpenAI tool dict, which litellm copies onto the
      Anthropic tool).
    - Each index in `positions` (negative counts from the end; out of range is ignored)
      gets one. A message that cannot carry one (blank content; a system message after
      index 0, which litellm moves into the system prompt) hands it to the nearest earlier
      message that can; a position that lands on a message already marked adds nothing.
    - At most MAX_BREAKPOINTS in all; when positions ask for more, the latest win (the
      last breakpoint is the one the next request reads the most from).

    Only the dicts that change are copied (shallowly, with their changed content / tool
    call lists); every other element is the caller's own object. The inputs are expected
    to carry no cache_control of their own.
    """
    out = list(messages)
    out_tools = list(tools) if tools is not None else None
    budget = MAX_BREAKPOINTS
    taken: set[int] = set()
    if out and out[0].get("role") == "system":
        marked = _marked(out[0])
        if marked is not None:
            out[0] = marked
            budget -= 1
            taken.add(0)
    if not taken and out_tools:
        out_tools[-1] = {**out_tools[-1], "cache_control": _ephemeral()}
        budget -= 1

    targets: set[int] = set()
    n = len(out)
    for position in positions:
        index = position + n if position < 0 else position
        if not 0 <= index < n:
            continue
        while index >= 0 and index not in taken and index not in targets and not _carries_here(out, index):
            index -= 1
        if index >= 0 and index not in taken:
            targets.add(index)
    for index in sorted(targets, reverse=True)[: max(0, budget)]:
        marked = _marked(out[index])
        assert marked is not None  # _carries_here said so
        out[index] = marked
    return out, out_tools


def _carries_here(messages: list[dict[str, Any]], index: int) -> bool:
    message = messages[index]
    if message.get("role") == "system" and index > 0:
        return False
    return can_carry(message)


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    try:
        return getattr(obj, name, None)
    except Exception:  # a lenient model class raising on unknown names
        return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(cache read, cache write) tokens from a litellm Usage (or its dict form); (0, 0) if absent.

    litellm 1.106.2 normalises every provider onto the OpenAI shape: reads in
    ``prompt_tokens_details.cached_tokens`` (OpenAI, DeepSeek's ``prompt_cache_hit_tokens``,
    Anthropic's ``cache_read_input_tokens``, Gemini's cached content), writes in
    ``prompt_tokens_details.cache_write_tokens`` (mirrored as ``cache_creation_tokens``).
    For Anthropic and Bedrock it also keeps ``cache_read_input_tokens`` /
    ``cache_creation_input_tokens`` on the usage itself; those are read first.
    ``usage.prompt_tokens`` includes both counts (see tests/llm/test_caching.py).
    """
    details = _field(usage, "prompt_tokens_details")
    read = _count(_field(usage, "cache_read_input_tokens")) or _count(_field(details, "cached_tokens"))
    write = (
        _count(_field(usage, "cache_creation_input_tokens"))
        or _count(_field(details, "cache_write_tokens"))
        or _count(_field(details, "cache_creation_tokens"))
    )
    return read, write
