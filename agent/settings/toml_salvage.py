"""What can be kept of the user's config.toml when it does not parse as TOML.

One typo (a missing quote in `[hooks]`) used to drop the whole file: the model, the key, the
permission rules — cairn then started as if unconfigured, and said so in a toast that
vanished after ten seconds. So the file is read again table by table (split on its
top-level `[table]` / `[[table]]` headers): every table that parses on its own is kept,
the ones that do not are named with the line of their error.

Only for the user's own file: a project's (a repository's) file that does not parse is
still ignored whole, so a broken repository file never half-applies. Standard library only.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

# A table header on a line of its own: `[name]`, `[a."b c".d]`, `[[name]]`, with an optional
# comment. A line inside a multi-line array can look like one; cut there, its table does
# not parse and is dropped (named), never half-read.
_HEADER = re.compile(r"""^\s*(\[\[?)\s*([A-Za-z0-9_\-."' ]+?)\s*\]\]?\s*(#.*)?$""")
_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")
ROOT = "the keys before the first [table]"


@dataclass
class Salvaged:
    """The tables kept (as one parsed document) and a description of each one dropped."""

    data: dict[str, Any] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)


def error_line(exc: BaseException) -> int | None:
    """The line a TOMLDecodeError points at (its message ends `(at line N, column M)`)."""
    found = _AT_LINE.search(str(exc))
    return int(found.group(1)) if found else None


def error_text(exc: BaseException, offset: int = 0) -> str:
    """`line N: what is wrong`, N counted in the whole file (`offset`: lines before the part parsed)."""
    message = _AT_LINE.sub("", str(exc)).strip() or type(exc).__name__
    line = error_line(exc)
    return f"line {line + offset}: {message}" if line is not None else message


def _parts(text: str) -> list[tuple[int, str, str]]:
    """(first line's number - 1, the header as written or ROOT, the part's text) per table."""
    parts: list[tuple[int, str, list[str]]] = [(0, ROOT, [])]
    for number, line in enumerate(text.split("\n")):
        header = _HEADER.match(line)
        if header:
            closing = "]]" if header.group(1) == "[[" else "]"
            parts.append((number, f"{header.group(1)}{header.group(2)}{closing}", []))
        parts[-1][2].append(line)
    return [(start, name, "\n".join(lines)) for start, name, lines in parts]


def _combine(into: dict[str, Any], part: dict[str, Any]) -> None:
    """Add `part`'s tables to `into`: tables merge, arrays of tables add up; a key both
    define otherwise is a conflict (the file's own error, maybe): ValueError, `into` unchanged."""

    def check(a: dict[str, Any], b: dict[str, Any]) -> None:
        for key, value in b.items():
            if key not in a:
                continue
            old = a[key]
            if isinstance(old, dict) and isinstance(value, dict):
                check(old, value)
            elif not (_tables(old) and _tables(value)):
                raise ValueError(f"{key} is defined twice")

    def add(a: dict[str, Any], b: dict[str, Any]) -> None:
        for key, value in b.items():
            if key not in a:
                a[key] = value
            elif isinstance(a[key], dict):
                add(a[key], value)
            else:
                a[key] = a[key] + value

    check(into, part)
    add(into, part)


def has_values(data: dict[str, Any]) -> bool:
    """Whether `data` holds a setting at all (not only empty tables)."""
    return any(not isinstance(v, dict) or has_values(v) for v in data.values())


def _tables(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def salvage(text: str) -> Salvaged:
    """Each table of `text` that parses alone, combined; the others described."""
    out = Salvaged()
    seen: set[str] = set()
    for start, name, body in _parts(text):
        if name in seen and not name.startswith("[["):  # TOML's own rule: a table is declared once
            out.dropped.append(f"{name} (line {start + 1}: declared twice)")
            continue
        seen.add(name)
        if all(not ln.strip() or ln.lstrip().startswith("#") for ln in body.split("\n")):
            continue
        try:
            parsed = tomllib.loads(body)
            _combine(out.data, parsed)
        except tomllib.TOMLDecodeError as exc:
            out.dropped.append(f"{name} ({error_text(exc, start)})")
        except (ValueError, RecursionError) as exc:
            out.dropped.append(f"{name} (line {start + 1}: {str(exc) or 'nested too deeply'})")
    return out
