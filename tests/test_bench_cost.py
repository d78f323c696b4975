"""bench/cost.py's pricing on hand-made requests: the prefix cache bills everything after a
changed message again; the floor bills only the changed message, so it is never above."""

from __future__ import annotations

import hashlib
import importlib.util
import json
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


def test_a_request_that_missed_a_fact_pays_one_round_trip():
    _, read, write, _ = cost.prices(SONNET)
    hit = _request(0, ["sys", "a"])
    missed = _request(1_000, ["sys", "a", "b"])
    missed.facts, missed.missed = 3, 1
    hit.facts = 2
    assert cost.round_trips([hit, missed], SONNET) == pytest.approx(3_000 * read + 2_000 * write)
    assert cost.recall_counts([hit, missed]) == (4, 5)


FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "transcripts" / "claude-code"


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"the shared fixtures are not at {FIXTURES}")
def test_auto_keeps_recall_and_bills_under_the_bar_on_the_shared_sessions(capsys):
    """SPEC §10 / issue 31: recall >= 0.95 and <= 0.80x append-only including round trips,
    for the Claude and the GPT-5 model; never above 1.0x on one session."""
    assert cost.main(["--json", *map(str, sorted(FIXTURES.glob("*.jsonl")))]) == 0
    result = json.loads(capsys.readouterr().out)
    for model in ("anthropic/claude-sonnet-4-5", "openai/gpt-5.1"):
        total = result["total"][model]
        assert set(total) >= {"append_only", "exact", "auto", "recall", "with_round_trips"}
        assert total["recall"]["auto"] >= 0.95, total
        assert total["with_round_trips"]["auto"] <= 0.80, total
        assert total["recall"]["append_only"] == 1.0
        for f in result["files"]:
            assert f[model]["with_round_trips"]["auto"] <= 1.0, (f["file"], f[model])
