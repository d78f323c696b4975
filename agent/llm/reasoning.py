"""How much a model thinks before it answers, asked the way litellm supports (issue 28).

The user picks an effort (`[llm] reasoning_effort`, `[models."…"] reasoning_effort`,
`--effort`, `/effort`); unset, the model does what it does by default. The effort is sent
only to a model whose price-map entry says it reasons (a model that does not would refuse
the parameter), or that the user declared reasoning (`[models."…"] supports_reasoning`: a
local reasoning model the map does not know, behind `--api-base`). Claude turns an effort
into extended thinking with a token budget taken out of the reply's `max_tokens`, and
Anthropic refuses a budget that does not fit under it, so the reply's limit grows by the
budget when it would not leave room for an answer.

Thinking a model sends is kept with its message (`meta["thinking"]`, and for Claude the
signed blocks, `meta["thinking_blocks"]`); Anthropic requires the signed blocks of a tool
loop back before its tool calls, and that is what the API form carries (see
`agent/session/models.py`). Other providers never get them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

from agent.settings.schema import Effort

if TYPE_CHECKING:
    from agent.settings.schema import Settings

EFFORTS: tuple[str, ...] = get_args(Effort)
# Claude's thinking budget per effort: litellm's own mapping (its constants
# DEFAULT_REASONING_EFFORT_*_THINKING_BUDGET, "minimal" raised to Anthropic's minimum of
# 1,024), mirrored so the reply's limit can make room before the request is sent.
# tests/llm/test_reasoning.py fails when litellm changes them.
THINKING_BUDGET = {"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096}
# Room left for the answer itself when the thinking budget had to be added to max_tokens.
ANSWER_ROOM_TOKENS = 4096
META_THINKING = "thinking"
META_THINKING_BLOCKS = "thinking_blocks"
THINKING_BLOCK_TYPES = ("thinking", "redacted_thinking")


def effort_for(settings: Settings, model: str, chosen: str | None = None) -> str | None:
    """The effort a request to `model` asks for: the session's `/effort` (`chosen`), else
    `--effort`, else the model's own `[models."…"]` setting, else `[llm]`'s; None: the model's
    default."""
    from agent.settings.schema import model_override

    configured = settings.effort or model_override(settings, model).reasoning_effort or settings.llm.reasoning_effort
    return chosen or configured


def reasons(model: str, declared: bool | None = None) -> bool:
    """`model` is sent an effort: as `[models."…"] supports_reasoning` (`declared`) says when
    set, else as litellm's price map does."""
    from agent.llm.cost_map import model_info

    if declared is not None:
        return declared
    info = model_info(model)
    return info is not None and bool(info.supports_reasoning)


def sent_effort(settings: Settings, model: str, chosen: str | None = None) -> str | None:
    """The effort a request to `model` carries (`effort_for`), None where none is sent: no
    effort asked, or a model that does not reason."""
    from agent.settings.schema import model_override

    effort = effort_for(settings, model, chosen)
    return effort if effort is not None and reasons(model, model_override(settings, model).supports_reasoning) else None


def thinks_in_blocks(model: str) -> bool:
    """A Claude model (Anthropic, Bedrock, Vertex AI …): thinking comes as signed blocks
    that must be sent back in a tool loop."""
    return "claude" in model.lower() or model.startswith("anthropic/")


def request_params(
    model: str, effort: str | None, max_tokens: int | None, declared: bool | None = None
) -> tuple[dict[str, Any], int | None]:
    """The completion arguments for `effort` on `model`, and the reply's limit to send.

    Nothing for no effort, or for a model that does not reason (`reasons`: `declared` is its
    `[models."…"] supports_reasoning`)."""
    from agent.llm.cost_map import model_info

    if effort is None or effort not in EFFORTS or not reasons(model, declared):
        return {}, max_tokens
    info = model_info(model)  # None: a model only the user's setting says reasons
    limit = info.max_output_tokens if info is not None else None
    if thinks_in_blocks(model):
        if effort == "off":
            return {}, max_tokens  # Claude does not think unless asked
        budget = THINKING_BUDGET[effort]
        if max_tokens is not None and max_tokens <= budget:
            grown = budget + max(max_tokens, ANSWER_ROOM_TOKENS)
            max_tokens = min(grown, limit) if limit else grown
        return {"reasoning_effort": effort}, max_tokens
    if effort == "off":
        if info is not None and info.supports_none_reasoning_effort:
            return {"reasoning_effort": "none"}, max_tokens
        if info is not None and info.supports_minimal_reasoning_effort:
            return {"reasoning_effort": "minimal"}, max_tokens
        return {}, max_tokens  # cannot be turned off (or not known how): its default
    if effort == "minimal" and info is not None and info.supports_minimal_reasoning_effort is False:
        effort = "low"
    return {"reasoning_effort": effort}, max_tokens


def unsigned_tool_loop(messages: list[dict[str, Any]]) -> bool:
    """The request continues from tool calls without signed thinking: the last assistant
    message calls tools and carries no thinking blocks (a read cairn made for the user's
    `@file`, agent/turn/attachments.py; an imported or interrupted message). Anthropic refuses
    thinking then ("a final assistant message must start with a thinking block"), so such a
    request goes without it; the next turn thinks again."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return bool(message.get("tool_calls")) and not message.get(META_THINKING_BLOCKS)
    return False


def complete_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks a provider accepts back: signed thinking and redacted thinking (an
    interrupted stream leaves a block without its signature, which Anthropic refuses)."""
    return [b for b in blocks if _complete(b)]


def _complete(block: dict[str, Any]) -> bool:
    if block.get("type") == "thinking":
        return bool(block.get("signature"))
    return block.get("type") == "redacted_thinking" and bool(block.get("data"))


class ThinkingCollector:
    """Rebuilds the provider's thinking blocks from litellm's stream deltas: text pieces of
    the open block, then its signature (which closes it), or a redacted block whole."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None

    def feed(self, deltas: Any) -> None:
        for raw in deltas or ():
            block = raw if isinstance(raw, dict) else getattr(raw, "__dict__", {})
            kind = block.get("type")
            if kind == "redacted_thinking":
                self._open = None
                self.blocks.append({"type": "redacted_thinking", "data": block.get("data") or ""})
                continue
            if kind != "thinking":
                continue
            text, signature = block.get("thinking") or "", block.get("signature") or ""
            if text:
                if self._open is None:
                    self._open = {"type": "thinking", "thinking": ""}
                    self.blocks.append(self._open)
                self._open["thinking"] += text
            if signature:
                if self._open is None:
                    self._open = {"type": "thinking", "thinking": ""}
                    self.blocks.append(self._open)
                self._open["signature"] = signature
                self._open = None
