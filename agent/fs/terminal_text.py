"""Text from outside made inert before it reaches a terminal: the one rule, for every front end.

What cairn prints is mostly written by others: the model's answer and thinking, a command's
output, a repository's file names and configuration, a stored (or imported) session, a
session title the model chose. A terminal obeys the control characters in what it is given:
`ESC ] 52 ; c ; … BEL` puts text of the attacker's choosing on the clipboard (paste-jacking),
`ESC ] 0 ; …` retitles the window, `ESC [ 2 J` clears the screen, a lone carriage return lets
a line overwrite what came before it, and a right-to-left override shows code in another
order than it runs (Trojan Source). So every such text goes through `inert` on its way out.

Each dangerous character is replaced by something visible, one character at a time, and
never deleted: the user of a developer tool wants to see that a sequence was there and what
it said (`␛]0;title␇`), not a silently altered text; and a mapping of single characters
needs no memory across the pieces of a streamed answer, so a sequence cut in two between
chunks is as harmless as a whole one. What is replaced:

- C0 controls but newline and tab (ESC, BEL, backspace, form feed…): the Unicode control
  pictures (`␛`, `␇`, `␈`, `␌`);
- a carriage return: part of a CRLF line end it is dropped (the line end stays); a lone one,
  which would send the cursor back over the line, shows as `␍`;
- DEL: `␡`;
- C1 controls (U+0080–U+009F; U+009B is a one-character CSI, U+009D an OSC): `\\x9b`;
- the bidirectional embedding, override and isolate controls (U+202A–U+202E,
  U+2066–U+2069): `\\u202e`. Text in Arabic or Hebrew needs none of them (its direction
  comes from its letters), and a terminal that applies them would show text out of order;
- lone surrogates (from a broken JSON escape): `\\udcff`, which no encoder rejects.

Everything else, including every printable character of any script and emoji, is unchanged,
and `inert` is idempotent (what it outputs contains nothing it replaces).

A JSON line (`--output-format json|stream-json`, `session list --json`) keeps its exact
values instead: `inert_json` writes the same characters as JSON escapes (`\\u001b`), which a
parser reads back as they were and a terminal shows as text.

Standard library only, and imports nothing of cairn's: the TUI, `cairn -p`, the ACP server and
`cairn session` all use it (agent/fs/ is the shared leaf every part may import).
"""

from __future__ import annotations

import io
import re
from typing import TextIO, cast

# The bidirectional controls Trojan Source uses (CVE-2021-42574): LRE RLE PDF LRO RLO, LRI RLI FSI PDI.
BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
# What is replaced; a CRLF is matched whole so that its CR goes and its LF stays.
_UNSAFE = re.compile(f"\r\n?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}]")
# In a JSON text these can only stand inside strings (JSON's own blanks are space, tab, LF and
# CR): written as escapes they mean the same characters. C0 controls json.dumps escapes itself.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}]")
CONTROL_PICTURES = 0x2400  # U+2400 SYMBOL FOR NULL: the picture of C0 control N is U+2400 + N
DELETE_PICTURE = "␡"
CARRIAGE_RETURN_PICTURE = "␍"


def _shown(match: re.Match[str]) -> str:
    found = match.group()
    if found == "\r\n":
        return "\n"
    if found == "\r":
        return CARRIAGE_RETURN_PICTURE
    code = ord(found)
    if code < 0x20:
        return chr(CONTROL_PICTURES + code)
    if code == 0x7F:
        return DELETE_PICTURE
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    """`text` safe to write to a terminal: every character that could drive it (see the module
    docstring) replaced by a visible stand-in; newlines, tabs and printable text unchanged."""
    return _UNSAFE.sub(_shown, text)


def inert_json(dumped: str) -> str:
    """A JSON text (from json.dumps or pydantic, `ensure_ascii` off) with the characters a
    terminal would obey that the dumper left raw (DEL, C1, bidi controls, lone surrogates)
    written as `\\uXXXX`: the same values to a parser, plain text to a terminal."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


class InertStream:
    """`inert` for text that arrives in pieces (a streamed answer). Stateless but for one case:
    a piece ending in a carriage return is held back until the next shows whether it was half
    of a CRLF (a line end) or a lone one (`␍`)."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        text = self._held + chunk
        self._held = "\r" if text.endswith("\r") else ""
        return inert(text[: len(text) - len(self._held)])

    def end(self) -> str:
        """What is still held (a last lone carriage return), made inert."""
        held, self._held = self._held, ""
        return inert(held)


class InertWriter(io.TextIOBase):
    """A text stream that makes whatever is written to it inert, then writes it to `target`."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target

    def write(self, text: str) -> int:
        self.target.write(inert(text))
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase types it as a plain attribute
        return getattr(self.target, "encoding", "utf-8")


def is_terminal(stream: TextIO) -> bool:
    """Whether `stream` is a terminal (a closed or fd-less stream is not)."""
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def inert_writer(stream: TextIO) -> TextIO:
    """`stream`, writing inert text (an InertWriter, typed as the stream it stands for)."""
    return stream if isinstance(stream, InertWriter) else cast(TextIO, InertWriter(stream))


def inert_on_terminal(stream: TextIO) -> TextIO:
    """`stream` as it is when it is a pipe or a file (its bytes are data: kept exactly),
    writing inert text when it is a terminal."""
    return inert_writer(stream) if is_terminal(stream) else stream
