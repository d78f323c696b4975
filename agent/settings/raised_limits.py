"""Resource limits a project's `.cairn/config.toml` may lower freely but raise only once trusted.

A resource limit bounds what cairn spends on the repository's behalf: time (a command's, a
request's, an MCP call's timeout), memory and tokens (the bytes of a file read, of a web page,
of an MCP result), disk (the context-file cache) and concurrency. A cloned repository lowering
one only makes cairn stricter; raising one (`max_file_bytes = 1e12`, `command_timeout = 1e9`)
lets the repository make cairn hold a huge file in memory or wait for ever, so it is a
widening key of agent/settings/trust.py like `yolo`.

Whether a value raises a limit is decided against cairn's default (the Settings model's,
written out below: settings.trust stays standard-library only, on the path to the first
screen, and cannot import the model that imports it; tests/test_trust_limits.py checks they
agree). Comparing with the default rather than with the user's own value is simpler and never
weaker: a user who raised a limit in their own config keeps it, and a project value above
the default is asked about even when the user's is higher still. A value that is not a
plain number at most the default (a string that pydantic would turn into a number, NaN,
infinity) needs trust too.

Hook timeouts are not listed: a project's `[[hooks.EVENT]]` needs trust whatever it says.
Context tuning (`fold_max_tokens`, `max_inline_chars`, the truncation fractions …) shapes
what one request carries within the model's window, which the provider bounds, so it is not
a resource limit here; nor is a model's `max_output_tokens` (the model's own limit caps it).
"""

from __future__ import annotations

import math
import re
from typing import Any

# (table, key) → cairn's default.
RESOURCE_LIMITS: dict[tuple[str, str], float] = {
    ("tools", "command_timeout"): 120.0,
    ("tools", "max_command_timeout"): 600.0,
    ("tools", "max_read_lines"): 2000,
    ("tools", "max_file_bytes"): 10 * 1024 * 1024,
    ("llm", "max_retries"): 5,
    ("llm", "retry_base_delay"): 1.0,
    ("llm", "retry_max_delay"): 30.0,
    ("llm", "request_timeout"): 600.0,
    ("llm", "stream_idle_timeout"): 60.0,
    ("context", "files_read_max_bytes"): 65_536,
    ("context", "files_tail_max_lines"): 2_000,
    ("context", "files_grep_max_results"): 50,
    ("context", "files_grep_timeout"): 5.0,
    ("context", "files_cache_max_bytes"): 1024**3,
    ("context", "files_ttl_days"): 30,
    ("mcp", "startup_timeout"): 30.0,
    ("mcp", "call_timeout"): 120.0,
    ("mcp", "headless_wait"): 30.0,
    ("mcp", "max_result_chars"): 1_000_000,
    ("web", "timeout"): 30.0,
    ("web", "max_bytes"): 5 * 1024 * 1024,
    ("web", "search_max_results"): 8,  # tokens of every search result
    ("web", "native_max_uses"): 5,  # Anthropic bills each search
    ("agents", "max_parallel"): 4,
    ("lsp", "timeout_ms"): 1500,  # each edit may wait this long for its diagnostics
    ("lsp", "max_diagnostics"): 10,  # lines in each edit's result
}
# Keys named like a limit that are context tuning, not resource limits (see the docstring).
TUNING: frozenset[tuple[str, str]] = frozenset(
    {
        ("llm", "max_output_tokens"),
        ("context", "default_max_output_tokens"),  # the reply's reservation when the model's limit is unknown
        ("context", "fallback_max_tokens"),
        ("context", "fold_max_tokens"),
        ("context", "fold_max_line_span"),
        ("context", "max_inline_chars"),
        ("context", "inline_preview_chars"),
        ("context", "files_read_default_bytes"),  # clamped to files_read_max_bytes
        ("context", "files_tail_default_lines"),  # clamped to files_tail_max_lines
        ("context", "terminal_max_age_ms"),  # when an old output becomes a placeholder
    }
)
# The tables whose keys may be limits, and what a key named like one looks like: a key added
# later and not yet listed above needs trust whatever its value (it cannot be compared).
LIMIT_TABLES = frozenset({"tools", "llm", "context", "mcp", "web", "agents", "sandbox", "lsp"})
LIMIT_NAME = re.compile(r"(^max_|_max_|timeout|_bytes$|_chars$|_lines$|_parallel$|_wait$)")


def _at_most(value: Any, default: float) -> bool:
    """A plain TOML number no larger than the default (a boolean is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value <= default


def raised(data: dict[str, Any]) -> list[tuple[tuple[str, str], Any]]:
    """The ((table, key), value) pairs of a parsed project config that raise a resource limit."""
    found: list[tuple[tuple[str, str], Any]] = []
    for table_name in sorted(LIMIT_TABLES):
        table = data.get(table_name)
        if not isinstance(table, dict):
            continue
        for key, value in table.items():
            where = (table_name, str(key))
            default = RESOURCE_LIMITS.get(where)
            if default is not None:
                if not _at_most(value, default):
                    found.append((where, value))
            elif where not in TUNING and LIMIT_NAME.search(str(key)):
                found.append((where, value))
    return found


def effect(name: str) -> str:
    """What raising this limit lets the file do, for the trust question."""
    table, _, key = name.partition(".")
    default = RESOURCE_LIMITS.get((table, key))
    above = (
        f"above cairn's default of {default:g}"
        if default is not None
        else "(a limit cairn does not know the default of)"
    )
    return f"raises a resource limit {above}: more time, memory or disk spent on this repository's behalf"
