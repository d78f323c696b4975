"""The `@path` imports of an instruction file, found as Claude Code finds them.

A Claude Code user's CLAUDE.md pulls other files in with `@docs/style.md`, `@AGENTS.md` or
`@~/.claude/my-project.md`; a setup with eleven such documents sends none of them unless the
imports are followed. Claude Code's rule, kept here: a token is `@` at the start of a line or
after white space, up to the next white space (`\\ ` escapes a space); it is not an import
inside a fenced code block, an indented code block or an inline code span (so a README quoting
`` `@decorator` `` or a shell example is not read as one); and only tokens shaped like a path
count (`./x`, `~/x`, `/x`, or a name starting with a letter, digit, `.`, `_` or `-`), so an
e-mail address or `@@` is not. Where the imports resolve and how they are read is
loading.py's business; this module only reads text, so it is pure.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TOKEN = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_BACKTICKS = re.compile(r"`+")
_NAME_START = re.compile(r"^[A-Za-z0-9._-]")
TRAILING = ".,;:!?)]'\""  # "see @README.md." names README.md: tried when the token as written is missing


def import_tokens(text: str) -> list[str]:
    """The import paths of `text` in order, each once, as written (escaped spaces unescaped)."""
    found: list[str] = []
    for line in _prose_lines(text):
        for match in _TOKEN.finditer(_without_code_spans(line)):
            token = match.group(1).replace("\\ ", " ")
            if _path_shaped(token) and token not in found:
                found.append(token)
    return found


def trimmed(token: str) -> str:
    """The token without trailing sentence punctuation (`@README.md.` → `README.md`)."""
    return token.rstrip(TRAILING)


def _path_shaped(token: str) -> bool:
    if token.startswith(("./", "~/")) or (token.startswith("/") and token != "/"):
        return True
    return not token.startswith("@") and bool(_NAME_START.match(token))


def _prose_lines(text: str) -> list[str]:
    """The lines of `text` outside fenced and indented code blocks."""
    lines: list[str] = []
    fence: str | None = None
    previous_blank = True
    in_indented = False
    for line in text.splitlines():
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            previous_blank = False
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            in_indented = False
            continue
        blank = not line.strip()
        indented = line.startswith(("    ", "\t")) and not blank
        if indented and (previous_blank or in_indented):
            in_indented = True
            continue
        if not blank:
            in_indented = False
        previous_blank = blank
        lines.append(line)
    return lines


def _without_code_spans(line: str) -> str:
    """`line` with each inline code span (a run of backticks up to the next run of the same
    length) blanked out; an unmatched run stays literal text."""
    out: list[str] = []
    pos = 0
    while True:
        opening = _BACKTICKS.search(line, pos)
        if opening is None:
            out.append(line[pos:])
            return "".join(out)
        run = opening.group(0)
        closing = next((m for m in _BACKTICKS.finditer(line, opening.end()) if m.group(0) == run), None)
        if closing is None:
            out.append(line[pos : opening.end()])
            pos = opening.end()
            continue
        out.append(line[pos : opening.start()])
        out.append(" " * (closing.end() - opening.start()))
        pos = closing.end()
