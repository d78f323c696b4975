"""An error as the TUI shows it: its first line, inert, never a traceback.

Every part of the TUI that catches an error for a toast or a notice (the app, turns, the
session flows, the screens) says it this way; a provider's or a tool's words may carry
terminal escapes, so the line is made inert (agent/fs/terminal_text.py).
"""

from __future__ import annotations

from agent.fs.terminal_text import inert


def readable(exc: BaseException) -> str:
    """An error's first line for a toast, inert: a provider's or a tool's words may carry escapes."""
    text = str(exc).strip().splitlines()
    return inert(text[0]) if text else type(exc).__name__
