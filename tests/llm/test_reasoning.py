"""agent/llm/reasoning.py: which effort reaches which model, the reply's limit, and the
thinking blocks rebuilt from litellm's stream deltas."""

from __future__ import annotations

import litellm.constants as constants

from agent.llm.reasoning import THINKING_BUDGET, ThinkingCollector, complete_blocks, request_params


def test_the_thinking_budgets_are_litellms():
    """THINKING_BUDGET mirrors litellm's mapping of an effort to Claude's budget: this fails
    when litellm changes it, so the reply's limit keeps making the right room."""
    assert THINKING_BUDGET["low"] == constants.DEFAULT_REASONING_EFFORT_LOW_THINKING_BUDGET
    assert THINKING_BUDGET["medium"] == constants.DEFAULT_REASONING_EFFORT_MEDIUM_THINKING_BUDGET
    assert THINKING_BUDGET["high"] == constants.DEFAULT_REASONING_EFFORT_HIGH_THINKING_BUDGET
    assert THINKING_BUDGET["minimal"] == max(
        constants.DEFAULT_REASONING_EFFORT_MINIMAL_THINKING_BUDGET, constants.ANTHROPIC_MIN_THINKING_BUDGET_TOKENS
    )


def test_no_effort_or_a_model_that_does_not_reason_sends_nothing():
    assert request_params("anthropic/claude-sonnet-4-5", None, 64_000) == ({}, 64_000)
    assert request_params("openai/gpt-4o", "high", 16_000) == ({}, 16_000)
    assert request_params("openai/some-local-model", "high", None) == ({}, None)


def test_claude_gets_an_effort_and_room_for_its_budget():
    assert request_params("anthropic/claude-sonnet-4-5", "high", 64_000) == ({"reasoning_effort": "high"}, 64_000)
    params, limit = request_params("anthropic/claude-sonnet-4-5", "medium", 512)
    assert params == {"reasoning_effort": "medium"} and limit is not None and limit > THINKING_BUDGET["medium"] + 512
    assert request_params("anthropic/claude-sonnet-4-5", "off", 64_000) == ({}, 64_000)


def test_openai_off_and_minimal_follow_what_the_model_takes():
    assert request_params("openai/gpt-5.1", "off", None) == ({"reasoning_effort": "none"}, None)
    assert request_params("openai/gpt-5", "off", None) == ({"reasoning_effort": "minimal"}, None)
    assert request_params("openai/gpt-5.1", "minimal", None) == ({"reasoning_effort": "low"}, None)
    assert request_params("openai/gpt-5", "minimal", None) == ({"reasoning_effort": "minimal"}, None)


def test_blocks_are_rebuilt_from_pieces_signatures_and_redacted_blocks():
    collector = ThinkingCollector()
    collector.feed([{"type": "thinking", "thinking": "First "}])
    collector.feed([{"type": "thinking", "thinking": "thought."}])
    collector.feed([{"type": "thinking", "thinking": "", "signature": "sig-1"}])
    collector.feed([{"type": "redacted_thinking", "data": "opaque"}])
    collector.feed([{"type": "thinking", "thinking": "Second."}])  # interrupted: never signed
    assert collector.blocks == [
        {"type": "thinking", "thinking": "First thought.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "thinking", "thinking": "Second."},
    ]
    assert complete_blocks(collector.blocks) == collector.blocks[:2]


def test_a_model_declared_reasoning_gets_the_effort_and_one_declared_not_does_not():
    """`[models."…"] supports_reasoning` wins over the price map either way."""
    local = "openai/some-local-model"
    assert request_params(local, "high", None, declared=True) == ({"reasoning_effort": "high"}, None)
    assert request_params(local, "off", None, declared=True) == ({}, None)  # not known how
    assert request_params("openai/gpt-5.1", "high", None, declared=False) == ({}, None)
