"""What bash makes of a command's raw text and of one word, for the subset whose meaning is exact.

The tree-sitter parse (agent/tools/shell_walk.py) only gives the structure; the value of every
word is computed here from the raw text: plain characters, `\\x` escapes, '…' and "…" without
`$` or backquotes. Anything outside that subset raises `Unsafe` with the reason the command
asks. The raw text is checked before it is parsed at all: a backslash-newline (which
tree-sitter-bash and bash read differently, SPEC §8), invisible characters, and non-ASCII text
under a locale whose bytes bash may split otherwise.
"""

from __future__ import annotations

import os
import unicodedata


class Unsafe(Exception):
    """Raised inside the parse with the reason the command asks."""


_UNQUOTED_PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,=+@%^!")
_GLOB = set("*?[]")
_BRACES = set("{}")
_METACHARS = set(" \t\n|&;()<>")


def raw_problem(command: str) -> str:
    """Why the raw text asks before it is parsed (see the module docstring); "" when it need not."""
    if "\\\n" in command:
        return "it continues a line with a backslash-newline"
    if not command.isascii() and not _locale_reads_utf8():
        return "it has non-ASCII text and bash's locale may read its bytes differently"
    for ch in command:
        if ch in "\n\t":
            continue
        cat = unicodedata.category(ch)
        if cat[0] == "C" or (cat[0] == "Z" and ch != " "):
            return f"it contains the invisible character U+{ord(ch):04X}"
    return ""


def _locale_reads_utf8() -> bool:
    """Whether bash (which gets our environment) reads the UTF-8 bytes of a command as we do.
    In a legacy multibyte locale (GBK, Big5, Shift-JIS…) the second byte of a character may
    be `\\`, `|` or a brace: the words would split differently. C and single-byte locales
    read a UTF-8 byte >= 0x80 as one character, never as an operator."""
    value = (os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG") or "C").casefold()
    charset = value.split(".", 1)[1].split("@", 1)[0] if "." in value else ""
    if charset in ("utf-8", "utf8") or value in ("c", "posix"):
        return True
    return charset.startswith(("iso8859", "iso-8859", "latin", "koi8", "cp125")) or (
        not charset and value.startswith(("en_", "de_", "fr_", "es_", "it_", "pt_", "nl_"))
    )


def _dollar_reason(text: str, i: int) -> str:
    after = text[i + 1 : i + 3]
    if after.startswith("(("):
        return "it uses arithmetic expansion $((…))"
    if after.startswith("("):
        return "it uses $(…) substitution"
    if after.startswith("{"):
        return "it expands a variable (${…})"
    if after.startswith("'"):
        return "it uses ANSI-C quoting $'…'"
    if after.startswith('"'):
        return 'it uses $"…" quoting'
    return "it expands a variable ($…)"


def word_value(text: str) -> str:
    """What bash makes of one word, for the subset whose meaning is exact; else `Unsafe`."""
    if not text:
        raise Unsafe("it cannot be parsed (an empty word)")
    if text[0] == "#":
        raise Unsafe("it cannot be parsed (# starts a word)")
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise Unsafe("it has an unterminated quote")
            out.append(text[i + 1 : end])
            i = end + 1
        elif ch == '"':
            i += 1
            while True:
                if i >= n:
                    raise Unsafe("it has an unterminated quote")
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "$":
                    raise Unsafe(_dollar_reason(text, i))
                if c == "`":
                    raise Unsafe("it uses backticks (command substitution)")
                if c == "\\" and i + 1 < n and text[i + 1] in '$`"\\':
                    out.append(text[i + 1])
                    i += 2
                    continue
                out.append(c)
                i += 1
        elif ch == "\\":
            if i + 1 >= n:
                raise Unsafe("it ends a word with a backslash")
            out.append(text[i + 1])
            i += 2
        elif ch == "$":
            raise Unsafe(_dollar_reason(text, i))
        elif ch == "`":
            raise Unsafe("it uses backticks (command substitution)")
        elif ch in _GLOB:
            raise Unsafe(f"it uses a glob pattern ({ch})")
        elif ch in _BRACES:
            raise Unsafe("it uses brace expansion {…}")
        elif ch == "~":
            if i == 0 or text[i - 1] in "=:":
                raise Unsafe("it uses ~ (tilde expansion)")
            out.append(ch)
            i += 1
        elif ch == "#":
            out.append(ch)  # not at the start of a word: a plain character to bash
            i += 1
        elif ch in _UNQUOTED_PLAIN or (ord(ch) > 127 and unicodedata.category(ch)[0] not in "CZ"):
            out.append(ch)
            i += 1
        elif ch in _METACHARS:
            raise Unsafe("it cannot be parsed (the parser and bash could split it differently)")
        else:
            raise Unsafe(f"it uses {ch!r} unquoted")
    return "".join(out)
