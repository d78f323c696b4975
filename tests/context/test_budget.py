"""Budget (seed 001 §3.3.5 steps 2–3, SPEC §5): threshold and allowed tokens."""

from __future__ import annotations

import math

import pytest

from agent.context.budget import (
    DEFAULT_RESERVED_TOKENS,
    TOKEN_BUFFER_FRACTION,
    Budget,
    allowed_tokens,
    budget_for,
    compute_budget,
    context_percent,
    effective_threshold_percent,
    is_valid_threshold,
    reserved_tokens,
    threshold_tokens,
)
from agent.settings.schema import ModelOverride, Settings


def test_seed_defaults():
    assert TOKEN_BUFFER_FRACTION == 0.1
    assert DEFAULT_RESERVED_TOKENS == 4096


@pytest.mark.parametrize(
    "window, reserved, expected",
    [
        (128_000, 4096, 115_200 - 4096),  # 128000 × 0.9 − 4096
        (200_000, 8192, 180_000 - 8192),
        (100_000, 0, 90_000),
        (10, 0, 9),
        (11, 0, 9),  # 9.9 floored
        (4096, 4096, 3686 - 4096),  # the reply eats the window: negative, every request triggers
    ],
)
def test_allowed_tokens_is_window_times_0_9_minus_reserved(window, reserved, expected):
    assert allowed_tokens(window, reserved) == expected


def test_allowed_tokens_custom_buffer():
    assert allowed_tokens(1000, 100, buffer=0.2) == 700


@pytest.mark.parametrize("max_output, expected", [(8192, 8192), (None, 4096), (0, 4096), (-5, 4096)])
def test_reserved_is_max_output_or_4096(max_output, expected):
    assert reserved_tokens(max_output) == expected


@pytest.mark.parametrize(
    "model, expected",
    [
        (None, 80.0),  # not configured: global
        (-1, 80.0),  # -1: global, by definition
        (-1.0, 80.0),
        (50, 50.0),  # valid: the model's wins
        (5, 5.0),  # bounds are valid
        (100, 100.0),
        (4.9, 80.0),  # invalid: global
        (0, 80.0),
        (-2, 80.0),
        (100.5, 80.0),
        (150, 80.0),
        (math.nan, 80.0),
        ("50", 80.0),
        (True, 80.0),
    ],
)
def test_effective_threshold(model, expected):
    assert effective_threshold_percent(80, model) == expected


def test_invalid_threshold_warns(caplog):
    with caplog.at_level("WARNING", logger="agent.context"):
        effective_threshold_percent(80, 250)
    assert "invalid per-model condense threshold" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="agent.context"):
        effective_threshold_percent(80, -1)
    assert caplog.text == ""


def test_is_valid_threshold():
    assert is_valid_threshold(42.5) and not is_valid_threshold(None)


def test_threshold_tokens_is_the_first_triggering_count():
    assert threshold_tokens(128_000, 80) == 102_400
    assert threshold_tokens(1000, 33.3) == 333
    assert threshold_tokens(1000, 33.35) == 334  # 333.5 → 334: contextPercent(333) < 33.35
    for window, percent in [(1000, 33.35), (128_000, 80), (7, 50)]:
        t = threshold_tokens(window, percent)
        assert context_percent(t, window) >= percent > context_percent(t - 1, window)


def test_budget_worked_example():
    # window 100000, max output 8000, global 80%: allowed 82000, threshold 80000.
    b = compute_budget(100_000, 8000, 80)
    assert b == Budget(window=100_000, reserved=8000, allowed=82_000, threshold_percent=80.0, threshold=80_000)
    assert not b.should_condense(79_999)
    assert b.should_condense(80_000)  # contextPercent ≥ threshold
    assert not b.over_allowed(82_000) and b.over_allowed(82_001)


def test_allowed_triggers_below_the_percent():
    # A big reply reservation: allowed (90000 − 30000 = 60000) is below 80%.
    b = compute_budget(100_000, 30_000, 80)
    assert b.allowed == 60_000
    assert not b.should_condense(60_000)
    assert b.should_condense(60_001) and b.over_allowed(60_001)


def test_per_model_threshold_overrides_global():
    b = compute_budget(100_000, 1000, 80, 50)
    assert b.threshold == 50_000 and b.should_condense(50_000) and not b.should_condense(49_999)
    assert compute_budget(100_000, 1000, 80, -1).threshold == 80_000
    assert compute_budget(100_000, 1000, 80, 0).threshold == 80_000


def test_unknown_output_limit_reserves_4096():
    assert compute_budget(100_000, None, 80).allowed == 90_000 - 4096


def test_window_must_be_positive():
    with pytest.raises(ValueError):
        compute_budget(0, 100, 80)


def test_budget_for_reads_settings_and_model_override():
    settings = Settings(models={"gpt-4o": ModelOverride(auto_condense_percent=60)})
    settings.context.auto_condense_percent = 75
    assert budget_for(settings, "openai/gpt-4o", window=100_000, max_output_tokens=4000).threshold == 60_000
    assert budget_for(settings, "other", window=100_000, max_output_tokens=4000).threshold == 75_000
    settings.models["gpt-4o"] = ModelOverride(auto_condense_percent=-1)
    assert budget_for(settings, "gpt-4o", window=100_000, max_output_tokens=4000).threshold == 75_000


def test_context_report_uses_the_seed_rules_for_a_per_model_minus_one(tmp_path):
    from agent.context.inspect import context_report
    from agent.settings.schema import Settings

    settings = Settings(
        workspace=tmp_path, models={"openai/custom-x": {"context_window": 100_000, "auto_condense_percent": -1}}
    )
    report = context_report(
        [], settings=settings, session_id="s", model="openai/custom-x", workspace=tmp_path, now_ms=1
    )
    assert report["window"] == 100_000 and report["threshold"] == 80_000  # the global 80 %
