"""The one sanitiser (agent/fs/terminal_text.py): nothing a terminal obeys survives it.

Properties over any text (hypothesis): the output holds no ESC, C0 control but newline and
tab, DEL, C1 control, bidi override or lone surrogate; inert is idempotent; printable text
passes unchanged; a stream cut anywhere gives what the whole text gives; a JSON line keeps its
values. And the attacks by name: OSC 52, OSC 0/2 (BEL- and ST-terminated), CSI 2J, DCS, APC,
PM, SOS, single-character ESC sequences, 8-bit CSI/OSC, a lone carriage return, Trojan Source.
"""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.fs.terminal_text import InertStream, InertWriter, inert, inert_json, inert_on_terminal, inert_writer

BIDI = {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]}
SURROGATES = {chr(c) for c in range(0xD800, 0xE000)}
# What must never reach a terminal: C0 but newline and tab, DEL, C1, bidi controls, surrogates.
FORBIDDEN = (
    {chr(c) for c in range(0x20) if chr(c) not in "\n\t"} | {chr(c) for c in range(0x7F, 0xA0)} | BIDI | SURROGATES
)
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300)
# Text with the characters the rule is about, often: a plain alphabet finds little.
HOSTILE_TEXT = st.text(
    alphabet=st.sampled_from(
        ["\x1b", "\x07", "\r", "\n", "\t", "\x9b", "\x9d", "\x7f", "\x00", "\u202e", "\u2066", "\ud800", "[", "]"]
        + list("ab;2J\\é中😀")
    ),
    max_size=200,
)
PRINTABLE = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"), exclude_characters="".join(BIDI))
    | st.sampled_from("\n\t"),
    max_size=300,
)

ATTACKS = {
    "osc52-clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "osc0-title-bel": "\x1b]0;PWNED\x07",
    "osc2-title-st": "\x1b]2;PWNED\x1b\\",
    "csi-clear": "\x1b[2J\x1b[H",
    "csi-sgr-hide": "\x1b[8mhidden\x1b[0m",
    "dcs": "\x1bP+q544e\x1b\\",
    "apc": "\x1b_Gf=100;AAAA\x1b\\",
    "pm": "\x1b^private\x1b\\",
    "sos": "\x1bXstring\x1b\\",
    "esc-reset": "\x1bc",
    "esc-keypad": "\x1b=\x1b>",
    "c1-csi": "\x9b2J",
    "c1-osc": "\x9d0;PWNED\x9c",
    "c1-dcs": "\x90q\x9c",
    "lone-cr-overwrite": "echo safe\rrm -rf ~",
    "backspace-overwrite": "safe\x08\x08\x08\x08evil",
    "trojan-source": "access = 'user\u202e \u2066// admin\u2069 \u2066'",
    "bell-and-nul": "\x07\x00",
}


def clean(text: str) -> bool:
    return not (set(text) & FORBIDDEN)


@pytest.mark.parametrize("attack", list(ATTACKS.values()), ids=list(ATTACKS))
def test_each_attack_is_inert_and_visible(attack):
    shown = inert("before " + attack + " after")
    assert clean(shown), repr(shown)
    assert shown.startswith("before ") and shown.endswith(" after")
    assert len(shown) >= len("before  after") + len(attack) - 1  # replaced, never deleted (a CRLF's CR aside)


def test_what_each_character_becomes():
    assert inert("\x1b]0;t\x07") == "␛]0;t␇"
    assert inert("\x1b[2J") == "␛[2J"
    assert inert("\x00\x08\x0b\x0c\x7f") == "␀␈␋␌␡"
    assert inert("\x9b31m \x9d") == "\\x9b31m \\x9d"
    assert inert("a\u202eb\u2069") == "a\\u202eb\\u2069"
    assert inert("\udcff") == "\\udcff"
    assert inert("one\r\ntwo\rthree") == "one\ntwo␍three"  # a line end stays; a lone CR shows
    assert inert("tab\there\nnew line é 中 😀 \u200d") == "tab\there\nnew line é 中 😀 \u200d"


@settings(max_examples=300, deadline=None)
@given(text=ANY_TEXT | HOSTILE_TEXT)
def test_any_text_comes_out_clean_and_inert_is_idempotent(text):
    shown = inert(text)
    assert clean(shown)
    assert inert(shown) == shown
    shown.encode("utf-8")  # no lone surrogate left to break an encoder


@settings(max_examples=200, deadline=None)
@given(text=PRINTABLE)
def test_printable_text_is_unchanged(text):
    assert inert(text) == text


@settings(max_examples=200, deadline=None)
@given(text=HOSTILE_TEXT | ANY_TEXT, cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=8))
def test_a_stream_cut_anywhere_shows_what_the_whole_text_shows(text, cuts):
    """A sequence split between two chunks of a streamed answer is as inert as a whole one,
    and a CRLF split between chunks is still one line end."""
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    stream = InertStream()
    pieces = [stream.feed(text[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)] + [stream.end()]
    assert "".join(pieces) == inert(text)
    assert all(clean(p) for p in pieces)


def test_a_crlf_split_between_chunks_is_a_line_end():
    stream = InertStream()
    assert stream.feed("one\r") == "one"
    assert stream.feed("\ntwo\r") == "\ntwo"
    assert stream.end() == "␍"


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(ANY_TEXT | HOSTILE_TEXT, lambda inner: st.lists(inner) | st.dictionaries(ANY_TEXT, inner)))
def test_a_json_line_keeps_its_values_and_is_inert(value):
    dumped = inert_json(json.dumps(value, ensure_ascii=False))
    assert clean(dumped)
    assert json.loads(dumped) == value


def test_json_escapes_only_what_a_terminal_obeys():
    assert inert_json(json.dumps({"t": "\x9b2J \u202e é \x1b"}, ensure_ascii=False)) == (
        '{"t": "\\u009b2J \\u202e é \\u001b"}'
    )


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_inert_text_a_pipe_the_bytes_as_they_are():
    pipe, tty = io.StringIO(), Tty()
    inert_on_terminal(pipe).write("\x1b]0;t\x07")
    inert_on_terminal(tty).write("\x1b]0;t\x07")
    assert pipe.getvalue() == "\x1b]0;t\x07"
    assert tty.getvalue() == "␛]0;t␇"
    writer = inert_writer(pipe)
    assert isinstance(writer, InertWriter) and inert_writer(writer) is writer  # wrapped once
    print("\x1b[2J", file=writer)
    assert pipe.getvalue().endswith("␛[2J\n")
