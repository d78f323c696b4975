"""Smart truncation (seed 001 §3.2): the request-copy fallback when condensing is off or fails.

One module per step, as the seed lays them out: middle_range (step 1), tool_filter (2),
file_folder (3), message_deleter (5); truncate.py runs them in order.
"""

from agent.context.truncation.file_folder import no_fold
from agent.context.truncation.middle_range import MIDDLE_END, MIDDLE_START
from agent.context.truncation.truncate import (
    FALLBACK_MAX_TOKENS,
    TruncationReport,
    TruncationResult,
    smart_truncate,
    truncate_until_fits,
)

__all__ = [
    "FALLBACK_MAX_TOKENS",
    "MIDDLE_END",
    "MIDDLE_START",
    "TruncationReport",
    "TruncationResult",
    "no_fold",
    "smart_truncate",
    "truncate_until_fits",
]
