"""Which tool calls a hook's `matcher` selects, read as Claude Code reads it.

Empty, missing or `*`: every tool. A plain name: that tool. Anything else is a regular
expression the whole tool name must match (`Edit|Write`, `mcp__github__.*`). Claude Code's
tool names count as names of cairn's tools (agent/hooks/names.py), so `Bash` selects
`terminal-execute`. A matcher that is not a valid expression selects only the tool of that
exact name: a typo must not turn a guard into one that matches everything.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from agent.hooks.names import CLAUDE_TOOLS, claude_aliases

MAX_MATCHER_CHARS = 1_000  # a config value, not a document
_NAMES = re.compile(r"[A-Za-z0-9_-]+(?:\|[A-Za-z0-9_-]+)*")  # `Edit|Write`: a list of plain names
MCP_PREFIX = "mcp__"  # MCP tools come and go as servers connect: a name of this form may yet exist


def matches_all(matcher: str | None) -> bool:
    return matcher is None or matcher.strip() in ("", "*")


@functools.lru_cache(maxsize=256)
def compiled(matcher: str) -> re.Pattern[str] | None:
    """The matcher as an expression, or None when it is not one (or absurdly long)."""
    if len(matcher) > MAX_MATCHER_CHARS:
        return None
    try:
        return re.compile(matcher)
    except (re.error, RecursionError, OverflowError):
        return None


def problem(matcher: str | None) -> str | None:
    """Why `matcher` is read as a plain name rather than an expression (for a warning), or None."""
    if matches_all(matcher) or matcher is None or compiled(matcher) is not None:
        return None
    return f"matcher {matcher!r} is not a valid regular expression; it matches only a tool of that exact name"


def matches(matcher: str | None, tool: str) -> bool:
    """Whether a hook with this `matcher` runs for a call of cairn's tool `tool`."""
    if matches_all(matcher):
        return True
    assert matcher is not None  # matches_all(None) is True
    matcher = matcher.strip()
    names = [tool, *claude_aliases(tool)]
    if matcher in names:
        return True
    pattern = compiled(matcher)
    return pattern is not None and any(pattern.fullmatch(name) for name in names)


def unmapped(matcher: str | None, tools: Iterable[str]) -> str | None:
    """Why a tool matcher selects no tool cairn has (`tools`: its tools' names; Claude Code's
    names of them count too), for a warning naming the hook; None when it may select one.
    A list of names (`Edit|NotebookEdit`) is told which of them cairn lacks; an expression is
    told when it matches none of cairn's names. `mcp__…` is never told: servers connect later."""
    if matches_all(matcher) or matcher is None:
        return None
    text = matcher.strip()
    known = set(tools) | {claude for claude, cairn in CLAUDE_TOOLS.items() if cairn in set(tools)}
    if _NAMES.fullmatch(text):
        missing = [name for name in text.split("|") if name not in known and not name.startswith(MCP_PREFIX)]
        if not missing:
            return None
        listed = ", ".join(missing)
        never = " never runs" if len(missing) == len(text.split("|")) else f" does not run for {listed}"
        return f"matcher {text!r} names {listed}, which cairn has no tool for: the hook{never}"
    pattern = compiled(text)
    if pattern is None or text.startswith(MCP_PREFIX) or any(pattern.fullmatch(name) for name in known):
        return None
    return f"matcher {text!r} matches none of cairn's tools: the hook never runs"
