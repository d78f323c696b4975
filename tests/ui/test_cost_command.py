"""/cost's sums (agent/ui/commands/cost.py): every answer's usage, subagents and condenses
under their own models, cache reads and writes, the cache share."""

from __future__ import annotations

from agent.session.models import Message
from agent.ui.commands.cost import format_cost, summarize


def _answer(model: str, prompt: int, completion: int, read: int, written: int, cost: float) -> Message:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "cache_read_tokens": read}
    usage["cache_write_tokens"] = written
    return Message(role="assistant", content="ok", meta={"model": model, "usage": usage, "cost": cost})


def test_cost_sums_answers_subagents_and_condenses_by_model():
    child = {"agent": "explore", "model": "openai/gpt-5-mini", "requests": 3, "prompt_tokens": 900}
    child["completion_tokens"] = 90
    messages = [
        Message(role="user", content="hi"),
        _answer("anthropic/claude-sonnet-4-5", 10_000, 200, 8_000, 1_000, 0.02),
        _answer("anthropic/claude-sonnet-4-5", 12_000, 300, 10_000, 500, 0.01),
        Message(role="tool", tool_call_id="s1", content="found", meta={"subagent": child, "cost": 0.005}),
        Message(
            role="user",
            kind="summary",
            content="...",
            meta={"condensed": {"model": "openai/gpt-5-mini", "cost": 0.001}},
        ),
        Message(role="assistant", tool_calls=[], meta={"attached": True}),  # an @file read: no request
    ]
    summary = summarize(messages)
    claude, mini = summary.by_model["anthropic/claude-sonnet-4-5"], summary.by_model["openai/gpt-5-mini"]
    assert (claude.requests, claude.prompt, claude.completion, claude.cache_read, claude.cache_write) == (
        2,
        22_000,
        500,
        18_000,
        1_500,
    )
    assert (mini.requests, mini.prompt, mini.completion, mini.via) == (4, 900, 90, {"subagent", "condense"})
    assert abs(summary.total.cost - 0.036) < 1e-9
    text = format_cost(summary)
    assert "Total cost          $0.0360" in text and "Cache share         79%" in text
    assert text.index("anthropic/claude-sonnet-4-5: $0.0300") < text.index(
        "openai/gpt-5-mini (incl. condense, subagent)"
    )


def test_cost_of_an_empty_session():
    assert "Nothing used yet" in format_cost(summarize([]))


def test_an_unpriced_model_says_price_unknown_not_zero_dollars():
    """Issue 46 item 26 (walk 21): a local model's $0 is unknown, not free."""
    from agent.ui.commands.cost import unpriced

    messages = [
        _answer("openai/fake-model", 3_558, 16, 0, 0, 0.0),
        _answer("anthropic/claude-sonnet-4-5", 1_000, 10, 0, 0, 0.004),
    ]
    summary = summarize(messages)
    assert unpriced(summary) == {"openai/fake-model"}
    text = format_cost(summary, unpriced(summary))
    assert "Total cost          $0.0040 + unknown" in text
    assert "openai/fake-model: price unknown · 1 request" in text
    assert "Price unknown for openai/fake-model" in text
    alone = summarize(messages[:1])
    assert "Total cost          price unknown" in format_cost(alone, unpriced(alone))
    assert "$0.0000" not in format_cost(alone, unpriced(alone))
