"""Seeded random drop by the seed's excess-ratio and batch formula (seed 001 §3.1 step 4)."""

from __future__ import annotations

from agent.context.folding.drop import (
    MAX_FOLD_TOKENS,
    apply_random_drop,
    batch_size,
    excess_ratio,
    join_sections,
)


def count(text: str) -> int:
    """A stand-in tokenizer: one token per character keeps the arithmetic checkable."""
    return len(text)


def sections(n: int, size: int = 99) -> list[str]:
    return [f"{i:03d}".ljust(size, "x") for i in range(n)]


def test_default_budget_is_the_seeds_10000():
    assert MAX_FOLD_TOKENS == 10_000


def test_excess_ratio_is_tokens_over_budget_minus_one():
    assert excess_ratio(15_000, 10_000) == 0.5
    assert excess_ratio(10_000, 10_000) == 0
    assert excess_ratio(5_000, 10_000) == -0.5


def test_batch_is_excess_tokens_over_average_section_rounded_up():
    # 15000 tokens in 10 sections: excess 5000, average 1500 → 3.33 → 4.
    assert batch_size(15_000, 10_000, 10) == 4
    assert batch_size(10_001, 10_000, 10) == 1
    assert batch_size(9_000, 10_000, 10) == 0
    # A huge excess rounds up to every section; one round keeps at least one.
    assert batch_size(1_000_000, 10, 5) == 4
    assert batch_size(1_000_000, 10, 1) == 1


def test_nothing_is_dropped_when_it_fits():
    parts = sections(5)
    result = apply_random_drop(parts, max_tokens=10_000, count_tokens=count)
    assert result.kept == [0, 1, 2, 3, 4] and result.dropped == []
    assert result.tokens == len(join_sections(parts))


def test_result_fits_and_survivors_keep_their_order():
    parts = sections(50)  # 50 × 100 tokens with separators
    result = apply_random_drop(parts, max_tokens=1_234, seed=7, count_tokens=count)
    assert result.tokens <= 1_234
    assert result.tokens == len(join_sections([parts[i] for i in result.kept]))
    assert result.kept == sorted(result.kept)
    assert sorted(result.kept + result.dropped) == list(range(50))
    assert len(result.kept) == 12  # the batch formula does not overshoot: 12 × 100 − 1 fits


def test_same_seed_same_drop_different_seed_may_differ():
    parts = sections(40)
    runs = {seed: apply_random_drop(parts, max_tokens=1_500, seed=seed, count_tokens=count) for seed in range(8)}
    again = apply_random_drop(parts, max_tokens=1_500, seed=3, count_tokens=count)
    assert again == runs[3]
    assert len({tuple(r.kept) for r in runs.values()}) > 1
    assert all(r.tokens <= 1_500 for r in runs.values())


def test_a_section_bigger_than_the_budget_goes_and_a_zero_budget_drops_everything():
    parts = ["a" * 50, "b" * 500, "c" * 50]
    result = apply_random_drop(parts, max_tokens=120, seed=1, count_tokens=count)
    assert 1 not in result.kept and result.tokens <= 120
    assert apply_random_drop(parts, max_tokens=0, count_tokens=count).kept == []
    assert apply_random_drop([], max_tokens=10, count_tokens=count).tokens == 0
