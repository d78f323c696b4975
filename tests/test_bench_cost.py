"""bench/cost.py's pricing on hand-made requests: the prefix cache bills everything after a
changed message again; the floor bills only the changed message, so it is never above."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import pytest

# bench/ holds scripts, not a package: load the one file without putting bench/ on sys.path.
_SPEC = importlib.util.spec_from_file_location(
    "bench_cost", Path(__file__).resolve().parent.parent / "bench" / "cost.py"
)
cost = sys.modules["bench_cost"] = importlib.util.module_from_spec(_SPEC)  # dataclasses look it up there
_SPEC.loader.exec_module(cost)

SONNET = "anthropic/claude-sonnet-4-5"


def _request(at: int, texts: list[str], tokens: int = 1000) -> cost.Request:
    prefix = hashlib.blake2b(digest_size=16)
    blocks, contents = [], []
    for text in texts:
        prefix.update(text.encode())
        blocks.append((prefix.copy().digest(), tokens))
        contents.append(hashlib.blake2b(text.encode(), digest_size=16).digest())
    return cost.Request(at=at, blocks=blocks, breakpoints=[0, len(texts) - 1], contents=contents)


def test_append_only_costs_the_same_under_both_and_a_replacement_only_under_the_prefix_rule():
    price_in, read, write, explicit = cost.prices(SONNET)
    assert explicit and read < price_in < write
    grow = [_request(0, ["sys", "a"]), _request(1_000, ["sys", "a", "b"])]
    assert cost.price(grow, SONNET, True) == pytest.approx(cost.floor_price(grow, SONNET))
    assert cost.price(grow, SONNET, True) == pytest.approx(2_000 * write + 2_000 * read + 1_000 * write)
    replaced = [_request(0, ["sys", "a", "b"]), _request(1_000, ["sys", "A", "b", "c"])]
    # Prefix rule: only "sys" is read; "A", "b" and "c" are written. Floor: "b" is read too.
    assert cost.price(replaced, SONNET, True) == pytest.approx(3_000 * write + 1_000 * read + 3_000 * write)
    assert cost.floor_price(replaced, SONNET) == pytest.approx(3_000 * write + 2_000 * read + 2_000 * write)


def test_after_the_ttl_everything_is_written_again():
    _, _, write, _ = cost.prices(SONNET)
    cold = [_request(0, ["sys", "a"]), _request(cost.TTL_MS + 1, ["sys", "a", "b"])]
    assert cost.floor_price(cold, SONNET) == pytest.approx(5_000 * write)
    assert cost.price(cold, SONNET, True) == pytest.approx(5_000 * write)
