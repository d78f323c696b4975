"""Front matter of the Markdown files other agents define things in (Claude Code's agents,
Agent Skills' `SKILL.md`): a `---` block of simple YAML, then the body.

Only the YAML those files use is understood — `key: value` (quoted or not), inline lists
`[a, b]`, block lists (`- a` lines), folded/literal blocks (`>` / `|`) — because these files
come from cloned repositories: a full YAML loader (anchors, tags, aliases) would be more than
is needed and more than should be trusted. Anything else is read as text. Standard library only.
"""

from __future__ import annotations

from typing import Any

FENCE = "---"


def split(text: str) -> tuple[dict[str, Any], str]:
    """(fields, body). No front matter (or an unclosed one): no fields, the whole text."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == FENCE), None)
    if end is None:
        return {}, text
    return parse(lines[1:end]), "\n".join(lines[end + 1 :])


def parse(lines: list[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#") or line[:1] in (" ", "\t"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        nested: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t", "-")):
            nested.append(lines[i])
            i += 1
        fields[key] = _value(value, nested)
    return fields


def _value(value: str, nested: list[str]) -> Any:
    if value[:1] in ("|", ">"):
        kept = [line.strip() for line in nested]
        while kept and not kept[-1]:
            kept.pop()
        return "\n".join(kept) if value[0] == "|" else " ".join(k for k in kept if k)
    items = [line.strip()[1:].strip() for line in nested if line.strip().startswith("-")]
    if not value and items:
        return [_scalar(item) for item in items]
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [_scalar(part) for part in inner.split(",")] if inner else []
    continued = " ".join(line.strip() for line in nested if line.strip())
    return _scalar(f"{value} {continued}".strip() if continued else value)


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in ("'", '"'):
        inner = text[1:-1]
        if text[0] == '"':
            return inner.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        return inner.replace("''", "'")
    if " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    return text
