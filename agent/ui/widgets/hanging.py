"""Lines that wrap under their own description column, not back at the left edge.

/help lists `  /name args   what it does`; at 80 columns a long description wrapped to
column 2, under the names, and the list stopped reading as a table. Each line here carries
the column its wrapped rest continues at (its hanging indent).
"""

from __future__ import annotations

import textwrap

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from agent.fs.terminal_text import inert

MIN_TEXT_WIDTH = 16  # below this, an indent leaves too little room: wrap at the left instead


class Hanging:
    """A Rich renderable: (`line`, `indent`) rows, each wrapped to the width it is drawn at,
    its continuation lines starting at column `indent`."""

    def __init__(self, rows: list[tuple[str, int]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for line, indent in self.rows:
            if indent and width - indent < MIN_TEXT_WIDTH:
                indent = 0
            wrapped = textwrap.wrap(
                inert(line),
                width,
                subsequent_indent=" " * indent,
                drop_whitespace=True,
                break_on_hyphens=False,
                replace_whitespace=False,
            )
            leading = line[: len(line) - len(line.lstrip(" "))]
            if wrapped and leading and not wrapped[0].startswith(leading):
                wrapped[0] = leading + wrapped[0]  # textwrap drops the row's own leading blanks
            for row in wrapped or [""]:
                yield Text(row, no_wrap=True, overflow="fold")
