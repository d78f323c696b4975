"""The model's glob for filesystem-find and filesystem-search's `glob`, matched here, not by rg.

ripgrep's own `--glob` is an override: a file it names is listed even when `.gitignore`
ignores it (`--glob '*'` lists `.git/` and every build output). So rg only gets the last
component as a file type (`--type-add`, which narrows without overriding ignores) and the
whole pattern is matched here, with the usual rules: a pattern without `/` matches a file
name in any folder; one with `/` matches the path relative to the folder searched; `*` and `?`
stay inside one component, `**` spans folders, `[...]` is a class, `{a,b}` alternatives.
The translation is run by RE2, so no pattern can take more than linear time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.tools.base import ToolError

MAX_GLOB_CHARS = 1000
MAX_BRACE_DEPTH = 10
_SPECIAL = set("\\.^$+()|{}[]*?")


@dataclass(frozen=True)
class Glob:
    text: str
    regex: Any  # an RE2 program over the path relative to the searched folder
    basename_only: bool
    last: str  # the last component, for rg's file-type narrowing ("" when it is `**`)

    def matches(self, relative: str) -> bool:
        subject = relative.rsplit("/", 1)[-1] if self.basename_only else relative
        return self.regex.fullmatch(subject) is not None


def _escape(ch: str) -> str:
    return "\\" + ch if ch in _SPECIAL else ch


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, depth, n = 0, 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
            continue
        if pattern.startswith("**", i) and n == 2:
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end < 0:
                out.append("\\[")
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
                i = end
        elif ch == "{":
            depth += 1
            if depth > MAX_BRACE_DEPTH:
                raise ToolError(f"glob {pattern!r} nests braces too deeply")
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(_escape(pattern[i]))
        else:
            out.append(_escape(ch))
        i += 1
    if depth:
        raise ToolError(f"glob {pattern!r} has an unclosed {{")
    return "".join(out)


def compile_glob(pattern: str) -> Glob:
    import re2

    text = pattern.strip()
    if not text:
        raise ToolError('the glob is empty; give one such as "*.py"')
    if len(text) > MAX_GLOB_CHARS:
        raise ToolError(f"the glob is too long ({len(text)} characters, at most {MAX_GLOB_CHARS})")
    if "\x00" in text:  # no file name holds one, and no program argument can
        raise ToolError("the glob contains a NUL character, which no file name can hold")
    text = text.removeprefix("./").lstrip("/") or "*"
    options = re2.Options()
    options.log_errors = False
    try:
        regex = re2.compile(_translate(text), options)
    except re2.error:
        raise ToolError(f"invalid glob {pattern!r}") from None
    last = text.rsplit("/", 1)[-1]
    return Glob(text=text, regex=regex, basename_only="/" not in text, last="" if "**" in last else last)


def type_flags(glob: Glob) -> list[str]:
    """rg flags that narrow the walk to files whose name can match (ignores still apply)."""
    if not glob.last or glob.last == "*" or glob.last.count("{") != glob.last.count("}"):
        return []
    return ["--type-add", f"cairnglob:{glob.last}", "--type", "cairnglob"]
