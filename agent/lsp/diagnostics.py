"""What an edit did to a file's diagnostics, in a few lines for the model. Pure.

The model needs the errors its change introduced, not the file's old warnings again on every
edit: so the diagnostics after the edit are compared with those before it, as a multiset of
(severity, source, code, message) — positions move when lines are added above, the words do
not — and only the new ones are listed (errors first, capped). A change that removed errors
and added none says so in one line. The server's words are untrusted: one line each, bounded,
inert.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel

from agent.fs.terminal_text import inert

ERROR = 1
WARNING = 2
SEVERITY_NAMES = {ERROR: "error", WARNING: "warning"}
MAX_MESSAGE_CHARS = 300
MAX_SOURCE_CHARS = 40


class Diagnostic(BaseModel):
    line: int  # 1-based, as filesystem-read numbers lines
    column: int  # 1-based
    severity: int  # ERROR or WARNING; information and hints are not kept
    message: str
    source: str = ""
    code: str = ""

    def key(self) -> tuple[int, str, str, str]:
        return (self.severity, self.source, self.code, self.message)


def _text(value: Any, limit: int) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return ""
    one_line = " ".join(value.split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1] + "…"
    return inert(one_line)


def _position(item: dict[str, Any]) -> tuple[int, int]:
    rng = item.get("range")
    start = rng.get("start") if isinstance(rng, dict) else None
    if not isinstance(start, dict):
        return 1, 1
    line, character = start.get("line"), start.get("character")
    if isinstance(line, int) and isinstance(character, int) and line >= 0 and character >= 0:
        return line + 1, character + 1
    return 1, 1


def parse(items: list[dict[str, Any]]) -> list[Diagnostic]:
    """The errors and warnings among a publish's raw items (a missing severity is an error, as
    the protocol lets the client decide); anything malformed is skipped."""
    found: list[Diagnostic] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        severity = item.get("severity", ERROR)
        if severity not in SEVERITY_NAMES:
            continue
        raw = item.get("message")
        message = _text(raw, MAX_MESSAGE_CHARS) if isinstance(raw, str) else ""
        if not message:
            continue
        line, column = _position(item)
        found.append(
            Diagnostic(
                line=line,
                column=column,
                severity=severity,
                message=message,
                source=_text(item.get("source"), MAX_SOURCE_CHARS),
                code=_text(item.get("code"), MAX_SOURCE_CHARS),
            )
        )
    return found


def introduced(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """Those of `after` that `before` did not have (as many times as they are new)."""
    left = Counter(d.key() for d in before)
    new: list[Diagnostic] = []
    for diagnostic in after:
        if left[diagnostic.key()] > 0:
            left[diagnostic.key()] -= 1
        else:
            new.append(diagnostic)
    return new


def fixed_errors(before: list[Diagnostic], after: list[Diagnostic]) -> int:
    """How many of the errors before are gone after."""
    remaining = Counter(d.key() for d in after if d.severity == ERROR)
    gone = 0
    for diagnostic in before:
        if diagnostic.severity != ERROR:
            continue
        if remaining[diagnostic.key()] > 0:
            remaining[diagnostic.key()] -= 1
        else:
            gone += 1
    return gone


def _line(d: Diagnostic) -> str:
    label = f" [{d.source}{' ' + d.code if d.code else ''}]" if d.source or d.code else ""
    return f"  {d.line}:{d.column} {SEVERITY_NAMES[d.severity]}: {d.message}{label}"


def report(server: str, display: str, before: list[Diagnostic], after: list[Diagnostic], cap: int) -> str:
    """The lines appended to an edit's result; "" when the edit changed nothing worth saying."""
    new = sorted(introduced(before, after), key=lambda d: (d.severity, d.line, d.column))
    fixed = fixed_errors(before, after)
    if not new:
        if not fixed:
            return ""
        return f"Diagnostics ({server}): fixed {fixed} error{'s' if fixed != 1 else ''} in {display}; none new."
    errors = sum(1 for d in new if d.severity == ERROR)
    warnings = len(new) - errors
    counts = ", ".join(
        part
        for part in (
            f"{errors} error{'s' if errors != 1 else ''}" if errors else "",
            f"{warnings} warning{'s' if warnings != 1 else ''}" if warnings else "",
        )
        if part
    )
    lines = [f"Diagnostics ({server}): this edit introduced {counts} in {display}:"]
    lines += [_line(d) for d in new[:cap]]
    if len(new) > cap:
        lines.append(f"  … and {len(new) - cap} more")
    if fixed:
        lines.append(f"  (and fixed {fixed} error{'s' if fixed != 1 else ''})")
    return "\n".join(lines)
