"""A command's list in the chat with hanging indents: a wrapped row continues under its own
text, not back at column 2 (/agents, /skills, /status, /cost at 80 columns read as tables).

`auto_rows` finds each row's indent from its shape: `  label    value` continues under the
value, `  1. item` under the item, any other indented row two columns further in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.ui.host import Host
    from agent.ui.widgets.chat import Notice

# `  label   value`: a label of a few words, then two or more blanks, then the value.
LABELLED = re.compile(r"^( *)\S+(?: \S+){0,3}( {2,})(?=\S)")
NUMBERED = re.compile(r"^( *)\d+\. ")
MAX_LABEL_COLUMN = 28  # past this a double blank is inside the text, not a column
EXTRA_INDENT = 2


def indent_of(line: str) -> int:
    labelled = LABELLED.match(line)
    if labelled and labelled.end() <= MAX_LABEL_COLUMN:
        return labelled.end()
    numbered = NUMBERED.match(line)
    if numbered:
        return numbered.end()
    leading = len(line) - len(line.lstrip(" "))
    return leading + EXTRA_INDENT if leading else 0


def auto_rows(text: str) -> list[tuple[str, int]]:
    return [(line, indent_of(line)) for line in text.split("\n")]


def show_rows(app: Host, rows: list[tuple[str, int]], kind: str = "help") -> Notice:
    """The rows as one notice in the chat, each wrapped under its indent."""
    from agent.ui.widgets.hanging import Hanging

    notice = app.chat.add_notice("\n".join(line for line, _ in rows), kind=kind)
    notice.update(Hanging(rows))
    return notice


def show_list(app: Host, text: str, kind: str = "help") -> Notice:
    return show_rows(app, auto_rows(text), kind)


def short_path(path: Path, workspace: Path) -> str:
    """Relative to the workspace when inside it, `~/…` in the home folder: shorter, and the
    same on every machine."""
    for base, prefix in ((workspace, ""), (Path.home(), "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)
