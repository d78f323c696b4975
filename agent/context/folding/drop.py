"""Seeded random drop of whole sections until the fold fits `max_tokens` (seed 001 §3.1 step 4).

A section is one file's `<system-reminder>` block. When the folded text is still over the
budget, the seed drops sections at random — no file is favoured, and the seeded RNG makes
the same input give the same output, so a rebuilt request (and the provider's prompt
cache) stays stable. The seed's formula, applied in rounds until the text fits:

    excessRatio  = (currentTokens / maxTokens) - 1        # <= 0: nothing to drop
    excessTokens = excessRatio * maxTokens                # = currentTokens - maxTokens
    batchSize    = ceil(excessTokens / avgTokensPerSection)   (at least 1)
    shuffle the sections, delete the first batchSize, recount the tokens

`avgTokensPerSection` is currentTokens / number of sections still kept (the joined text's
tokens, so the separators and tokenizer seams are shared out too). One round never drops
every section when more than one is left: with a large excess the formula rounds up to
all of them, yet a smaller survivor may fit, so the next round decides. Survivors keep
their original order. A budget of zero or less drops everything.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_FOLD_TOKENS = 10_000
DEFAULT_DROP_SEED = 0
SECTION_SEPARATOR = "\n"


@dataclass(frozen=True)
class DropResult:
    kept: list[int]  # indices into the input sections, in input order
    dropped: list[int]  # indices, in the order they were dropped
    tokens: int  # tokens of the joined kept sections


def join_sections(sections: Sequence[str]) -> str:
    return SECTION_SEPARATOR.join(sections)


def excess_ratio(tokens: int, max_tokens: int) -> float:
    """The seed's `(currentTokens / maxTokens) - 1`; infinite for a non-positive budget."""
    if max_tokens <= 0:
        return math.inf if tokens > 0 else 0.0
    return tokens / max_tokens - 1


def batch_size(tokens: int, max_tokens: int, sections: int) -> int:
    """How many sections to drop this round: excessTokens / avgTokensPerSection, rounded up."""
    ratio = excess_ratio(tokens, max_tokens)
    if sections <= 0 or ratio <= 0:
        return 0
    if math.isinf(ratio):
        return sections
    excess_tokens = ratio * max_tokens
    average = tokens / sections
    batch = math.ceil(excess_tokens / average)
    return max(1, min(sections - 1, batch)) if sections > 1 else 1


def apply_random_drop(
    sections: Sequence[str],
    *,
    max_tokens: int = MAX_FOLD_TOKENS,
    seed: int = DEFAULT_DROP_SEED,
    count_tokens: Callable[[str], int],
) -> DropResult:
    """Drop random sections by the seed's batch formula until the joined text fits."""
    rng = random.Random(seed)
    kept = list(range(len(sections)))
    dropped: list[int] = []
    tokens = count_tokens(join_sections(sections)) if sections else 0
    while kept and excess_ratio(tokens, max_tokens) > 0:
        batch = batch_size(tokens, max_tokens, len(kept))
        order = list(kept)
        rng.shuffle(order)
        gone = order[:batch]
        dropped.extend(gone)
        removed = set(gone)
        kept = [i for i in kept if i not in removed]
        tokens = count_tokens(join_sections([sections[i] for i in kept])) if kept else 0
    return DropResult(kept=kept, dropped=dropped, tokens=tokens)
