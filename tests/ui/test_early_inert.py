"""The first screen (drawn before Textual, written to the terminal as it is) carries no escape
sequence but its own styles: not from a resumed session's stored messages, and not from what
is typed or pasted into its prompt."""

from __future__ import annotations

import re

from agent.ui.early import frame
from agent.ui.early_history import history_lines
from tests.hostile.test_terminal_text import FORBIDDEN

HOSTILE = "a \x1b]52;c;ZXZpbA==\x1b\\ b \x1b]0;PWNED\x07 c \x1b[2J d \x9b31m e \x9d2;T\x9c f \u202eg line\rover"
# cairn's own: SGR colours, cursor positioning, clearing its own screen.
OWN_SEQUENCES = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\d+;\d+H|^\x1b\[H\x1b\[2J")


def foreign(text: str) -> set[str]:
    return set(OWN_SEQUENCES.sub("", text)) & FORBIDDEN


def test_a_resumed_sessions_lines_are_inert():
    messages = [
        {"role": "user", "content": HOSTILE, "meta": {}},
        {"role": "assistant", "content": HOSTILE, "tool_calls": [{"id": "c1", "name": "x\x1b[2J", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": HOSTILE, "status": "ok", "tool_name": "x", "meta": {}},
        {
            "role": "user",
            "kind": "note",
            "content": "<bash-stdout>" + HOSTILE + "</bash-stdout>",
            "meta": {"shell": {"command": HOSTILE}},
        },
    ]
    lines = history_lines(messages, 200)
    assert foreign("\n".join(lines)) == set()
    assert any("␛]0;PWNED␇" in line for line in lines)


def test_what_is_typed_or_pasted_before_the_app_is_inert():
    for shown in (frame(100, 30, HOSTILE, "starting…"), frame(100, 30, "", "starting…", sent=HOSTILE)):
        assert foreign(shown) == set(), repr(shown)
