"""Which model to use and how big its window is."""

from __future__ import annotations

import os

from pydantic import BaseModel

from agent.config import Settings, model_override

# With no model configured, the first provider key found picks a sensible default.
DEFAULT_MODEL_BY_KEY: list[tuple[str, str]] = [
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai/gpt-5.1"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-pro"),
    ("GOOGLE_API_KEY", "gemini/gemini-2.5-pro"),
    ("MISTRAL_API_KEY", "mistral/mistral-large-latest"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5"),
]


def resolve_model(settings: Settings) -> str | None:
    if settings.model:
        return settings.model
    for key, model in DEFAULT_MODEL_BY_KEY:
        if os.environ.get(key):
            return model
    return None


class ModelLimits(BaseModel):
    context_window: int
    max_output_tokens: int
    from_litellm: bool = False  # the model is in litellm's cost map


def model_limits(settings: Settings, model: str) -> ModelLimits:
    """Config override > litellm's cost map (read without importing litellm) > configured defaults.

    The output limit is what each request sends as max_tokens and what the budget reserves
    for the reply: `[models."<model>"] max_output_tokens` > `llm.max_output_tokens` > the map >
    `context.default_max_output_tokens`."""
    from agent.llm.cost_map import model_info

    info = model_info(model)  # None: unknown to litellm (local or custom models): use defaults
    window = info.context_window if info else None
    output = info.max_output_tokens if info else None
    override = model_override(settings, model)
    return ModelLimits(
        context_window=override.context_window or window or settings.context.default_context_window,
        max_output_tokens=(override.max_output_tokens or settings.llm.max_output_tokens or output
                           or settings.context.default_max_output_tokens),
        from_litellm=info is not None,
    )
