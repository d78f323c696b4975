"""When to shrink the context: the condense threshold and the allowed tokens (seed 001 §3.3, SPEC §5).

Seed 001 §3.3.5 step 2 and 3, as implemented here:

- effective threshold: "优先使用配置文件的自定义阈值 / 如果配置文件阈值为-1，使用全局阈值 /
  如果配置文件阈值无效，使用全局阈值" — the model's own percent wins; -1 (and no value at
  all) means "use the global percent"; an invalid value (not a number, NaN, or outside
  [`MIN_THRESHOLD_PERCENT`, `MAX_THRESHOLD_PERCENT`]) also falls back to the global one,
  with a warning, so a typo in the config never disables or permanently triggers condensing.
- allowed tokens: "contextWindow * (1 - 0.1) - reservedTokens" — a 10% buffer for tokenizer
  differences (seed §8.1, §8.2) and room for the reply (reserved = the model's max output
  tokens, "默认4096" when unknown).
- trigger: "contextPercent >= effectiveThreshold 或 prevContextTokens > allowedTokens", with
  "contextPercent = (100 * prevContextTokens) / contextWindow".

Pure arithmetic: no I/O, no litellm. The caller supplies the window and output limit
(agent/llm/models.py::model_limits) so this stays cheap and testable.
"""

from __future__ import annotations

import logging
import math
from fractions import Fraction
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from agent.settings.schema import Settings

log = logging.getLogger("agent.context")

# "保留10%缓冲区"
TOKEN_BUFFER_FRACTION = 0.1
# "为响应预留token（默认4096）"
DEFAULT_RESERVED_TOKENS = 4096
# A per-model threshold of -1 means "use the global one".
USE_GLOBAL_THRESHOLD = -1
# The seed only says "无效" (invalid); the range is Roo Code's (the seed's origin):
# MIN_CONDENSE_THRESHOLD = 5, MAX_CONDENSE_THRESHOLD = 100.
MIN_THRESHOLD_PERCENT = 5.0
MAX_THRESHOLD_PERCENT = 100.0


def is_valid_threshold(percent: object) -> bool:
    """A usable per-model percent: a real number in [MIN, MAX] (bool is not a number here)."""
    if isinstance(percent, bool) or not isinstance(percent, (int, float)):
        return False
    if math.isnan(percent):
        return False
    return MIN_THRESHOLD_PERCENT <= percent <= MAX_THRESHOLD_PERCENT


def effective_threshold_percent(global_percent: float, model_percent: float | None = None) -> float:
    """The model's percent when it is set and valid, else the global one (seed §3.3.5 step 2)."""
    if model_percent is None or model_percent == USE_GLOBAL_THRESHOLD:
        return float(global_percent)
    if not is_valid_threshold(model_percent):
        log.warning("invalid per-model condense threshold %r; using the global %s%%", model_percent, global_percent)
        return float(global_percent)
    return float(model_percent)


def reserved_tokens(max_output_tokens: int | None, default: int = DEFAULT_RESERVED_TOKENS) -> int:
    """Tokens kept free for the reply: the model's max output tokens, `default` when unknown."""
    return max_output_tokens if max_output_tokens and max_output_tokens > 0 else default


def allowed_tokens(window: int, reserved: int, buffer: float = TOKEN_BUFFER_FRACTION) -> int:
    """`window × (1 − buffer) − reserved`, floored. Exact for decimal buffers: 128000 × 0.9 in
    floats is not 115200, so the arithmetic is done on fractions of the decimal text.
    May be ≤ 0 when the reply reservation eats the window; every request then triggers."""
    return math.floor(Fraction(window) * (1 - Fraction(str(buffer)))) - reserved


def threshold_tokens(window: int, percent: float) -> int:
    """The smallest token count that triggers: `contextPercent >= percent` ⟺ tokens ≥ this."""
    return math.ceil(Fraction(window) * Fraction(str(percent)) / 100)


def context_percent(tokens: int, window: int) -> float:
    """ "(100 * prevContextTokens) / contextWindow"."""
    return 100 * tokens / window if window > 0 else math.inf


class Budget(BaseModel):
    """The limits one request is checked against."""

    window: int
    reserved: int
    allowed: int
    threshold_percent: float
    threshold: int

    def should_condense(self, tokens: int) -> bool:
        """Seed §3.3.5 step 3: either condition triggers."""
        return tokens >= self.threshold or self.over_allowed(tokens)

    def over_allowed(self, tokens: int) -> bool:
        return tokens > self.allowed


def compute_budget(
    window: int,
    max_output_tokens: int | None,
    global_percent: float,
    model_percent: float | None = None,
    *,
    buffer: float = TOKEN_BUFFER_FRACTION,
    default_reserved: int = DEFAULT_RESERVED_TOKENS,
) -> Budget:
    if window <= 0:
        raise ValueError(f"context window must be positive, got {window}")
    reserved = reserved_tokens(max_output_tokens, default_reserved)
    percent = effective_threshold_percent(global_percent, model_percent)
    return Budget(
        window=window,
        reserved=reserved,
        allowed=allowed_tokens(window, reserved, buffer),
        threshold_percent=percent,
        threshold=threshold_tokens(window, percent),
    )


def budget_for(settings: Settings, model: str, *, window: int, max_output_tokens: int | None) -> Budget:
    """The budget of `model` under `settings`: the global `context.auto_condense_percent`
    and the model's `models.<name>.auto_condense_percent` override. `window` and
    `max_output_tokens` come from `model_limits` (litellm info < config override)."""
    from agent.settings.schema import model_override

    override = model_override(settings, model) if model else None
    return compute_budget(
        window,
        max_output_tokens,
        settings.context.auto_condense_percent,
        override.auto_condense_percent if override else None,
    )
