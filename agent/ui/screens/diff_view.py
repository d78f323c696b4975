"""An approval's diff as a reader checks it: line numbers, and long lines hanging under their text.

A unified diff drawn as plain text wrapped its long lines back to column 0, where a
continuation looked like a line of its own with no sign, and said nowhere which line of the
file was changed (issue 46). Here each line carries the number it has in the file (the new
file's, the old one's for a removed line, counted from the hunk headers), and a line too long
for the panel goes on under its own text, past the number and the sign.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from agent.fs.terminal_text import inert

HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
MIN_TEXT_WIDTH = 12  # narrower than this after the gutter: wrap at the left instead
STYLES = {"+": "green", "-": "red", " ": "dim"}


def numbered(diff: str) -> list[tuple[str, str, str]]:
    """(number, line, style) for each line: the number empty for headers and hunk lines."""
    rows: list[tuple[str, str, str]] = []
    old = new = 0
    for line in inert(diff).splitlines():
        hunk = HUNK.match(line)
        if hunk:
            old, new = int(hunk.group(1)), int(hunk.group(2))
            rows.append(("", line, "cyan"))
        elif line.startswith(("+++", "---", "diff ", "\\")):
            rows.append(("", line, "bold" if not line.startswith("\\") else "dim"))
        elif line[:1] == "+":
            rows.append((str(new), line, STYLES["+"]))
            new += 1
        elif line[:1] == "-":
            rows.append((str(old), line, STYLES["-"]))
            old += 1
        else:
            rows.append((str(new) if new else "", line, STYLES[" "]))
            old, new = old + 1, new + 1
    return rows


class NumberedDiff:
    """A Rich renderable: the diff with a line-number gutter, wrapped to the width it is
    drawn at, each continuation under its line's text (after the sign)."""

    def __init__(self, diff: str) -> None:
        self.rows = numbered(diff)
        self.gutter = max((len(number) for number, _, _ in self.rows), default=0)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        gutter = self.gutter + 1 if self.gutter else 0
        for number, line, style in self.rows:
            sign = 1 if number else 0  # a numbered line's text starts after its +/-/space
            indent = gutter + sign
            if width - indent < MIN_TEXT_WIDTH:
                indent = 0
            head = Text(f"{number:>{self.gutter}} " if gutter else "", style="dim")
            if cell_len(line) + gutter <= width:
                yield head + Text(line, style=style, no_wrap=True)
                continue
            first, rest = line[: sign or 0], line[sign:]
            pieces = chop_cells(rest, max(1, width - max(indent, gutter + sign)))
            yield head + Text(first + pieces[0], style=style, no_wrap=True)
            for piece in pieces[1:]:
                yield Text(" " * indent + piece, style=style, no_wrap=True, overflow="fold")
