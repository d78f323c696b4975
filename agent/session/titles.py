"""A session's title: the first prompt as the user typed it, never a command's expansion.

A slash command's turn sends its expansion (`<command name="init">\nStudy this project…`,
agent/commands/invocation.py `block`); titled from that, the `/init` session read
`<command name="init">…` in the status bar, `/resume` and `cairn session list`. The turn is
titled from what was typed (`/init`), and a title stored that way before is read back as the
command it was (no migration: the row keeps what it has).
"""

from __future__ import annotations

import re

TITLE_CHARS = 60
# A title cut from an expansion: `<command name="x">` and whatever of the body fit after it.
STORED_COMMAND_TITLE = re.compile(r'^<command name="([^"]+)">')


def title_for(typed: str) -> str:
    """The title a session gets from its first prompt, as typed: one line, at most TITLE_CHARS."""
    return readable_title(" ".join(typed.split())[:TITLE_CHARS])


def readable_title(title: str) -> str:
    """`/name` for a title that is a command's expansion, else the title itself."""
    found = STORED_COMMAND_TITLE.match(title)
    return f"/{found.group(1)}" if found else title
