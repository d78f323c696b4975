"""Shown in place of a chat when no model is configured: how to set one, how to leave."""

from __future__ import annotations

from textual.widgets import Static

from agent.paths import config_dir


def no_model_text() -> str:
    """Short lines, each way's detail indented under it: the panel is the first thing a new
    user without a key sees, and at 80 columns longer lines wrapped back to its left edge."""
    cfg = config_dir() / "config.toml"
    return "\n".join(
        [
            "No model configured",
            "",
            "cairn talks to any model litellm supports. Choose one of:",
            "  • a flag: cairn --model openai/gpt-4o",
            "    (or anthropic/claude-sonnet-4-5, gemini/gemini-2.5-pro, …)",
            "  • a provider key in the environment picks a default model:",
            "    ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY",
            "  • an environment variable: CAIRN_MODEL=openai/gpt-4o",
            '  • model = "openai/gpt-4o" in the config file',
            f"    {cfg}",
            "",
            "Or type /model <name> here to use one now. /quit or Ctrl+C exits.",
        ]
    )


class NoModelPanel(Static):
    def __init__(self) -> None:
        super().__init__(no_model_text(), markup=False, id="no-model")
