"""A server's answers to the `lsp` tool as the model reads them: `path:line:col` with the line
itself, or a hover's text. Pure but for `read_line`, which the caller supplies.

The answer is untrusted: a location may name any file on the machine, so the caller's
`read_line` shows a line only of files inside the workspace (a hostile server cannot make
cairn read ~/.ssh for the model); lists, texts and lines are bounded, every string inert.
Positions come back 1-based in characters, as the model gave them (the protocol counts
UTF-16 code units from 0).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agent.fs.terminal_text import inert

MAX_LOCATIONS = 50
MAX_CONTEXT_CHARS = 200
MAX_HOVER_CHARS = 4000
MAX_URI_CHARS = 300

LineReader = Callable[[Path, int], str | None]  # (absolute path, 0-based line) → its text, or None


def utf16_column(line_text: str, character: int) -> int:
    """The UTF-16 offset of the 0-based code point `character` of `line_text`."""
    return len(line_text[:character].encode("utf-16-le")) // 2


def code_point_column(line_text: str, utf16: int) -> int:
    """The 0-based code point at UTF-16 offset `utf16` of `line_text` (inverse of the above)."""
    units = 0
    for index, char in enumerate(line_text):
        if units >= utf16:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line_text)


def _target(item: Any) -> tuple[str, dict[str, Any]] | None:
    """(uri, start position) of a Location or a LocationLink."""
    if not isinstance(item, dict):
        return None
    uri = item.get("uri", item.get("targetUri"))
    rng = item.get("range", item.get("targetSelectionRange", item.get("targetRange")))
    start = rng.get("start") if isinstance(rng, dict) else None
    if not isinstance(uri, str) or not isinstance(start, dict):
        return None
    return uri, start


def _shown_path(uri: str, workspace: Path) -> tuple[str, Path | None]:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return inert(uri[:MAX_URI_CHARS]), None
    path = Path(unquote(parsed.path))
    try:
        return path.relative_to(workspace).as_posix(), path
    except ValueError:
        return inert(str(path)[:MAX_URI_CHARS]), path


def locations(answer: Any, workspace: Path, read_line: LineReader) -> list[str]:
    """`path:line:col: text` per location (text only where `read_line` gives it)."""
    items = answer if isinstance(answer, list) else [answer] if answer else []
    out: list[str] = []
    seen: set[tuple[str, int, int]] = set()
    for item in items:
        found = _target(item)
        if found is None:
            continue
        uri, start = found
        line, unit = start.get("line"), start.get("character")
        if not isinstance(line, int) or not isinstance(unit, int) or line < 0 or unit < 0:
            continue
        shown, path = _shown_path(uri, workspace)
        text = read_line(path, line) if path is not None else None
        column = code_point_column(text, unit) if text is not None else unit
        if (shown, line, column) in seen:
            continue
        seen.add((shown, line, column))
        if len(out) == MAX_LOCATIONS:
            out.append(f"… and more (the first {MAX_LOCATIONS} shown)")
            break
        context = f": {inert(' '.join(text.split())[:MAX_CONTEXT_CHARS])}" if text else ""
        out.append(f"{shown}:{line + 1}:{column + 1}{context}")
    return out


def _hover_part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and isinstance(part.get("value"), str):
        return part["value"]
    return ""


def hover_text(answer: Any) -> str:
    """A hover's contents (MarkupContent, MarkedString or a list of them) as plain text."""
    contents = answer.get("contents") if isinstance(answer, dict) else None
    parts = contents if isinstance(contents, list) else [contents]
    text = "\n\n".join(p for p in (_hover_part(part).strip() for part in parts[:20]) if p)
    if len(text) > MAX_HOVER_CHARS:
        text = text[:MAX_HOVER_CHARS] + "\n… (cut)"
    return inert(text)
