"""The first screen's key handling and layout (agent/ui/early.py), without a terminal."""

from __future__ import annotations

import re

from agent.ui.early import PLACEHOLDER, KeyBuffer, frame


def typed(*chunks: bytes) -> KeyBuffer:
    keys = KeyBuffer()
    for chunk in chunks:
        keys.feed(chunk)
    return keys


def test_text_backspace_and_clear():
    assert typed(b"h", b"e", b"l", b"l", b"o").text == "hello"
    assert typed(b"hellx", b"\x7f", b"o").text == "hello"
    assert typed(b"abc", b"\x08\x08").text == "a"
    assert typed(b"throw this away", b"\x15", b"keep").text == "keep"
    assert typed(b"\x7f").text == ""


def test_utf8_split_across_reads():
    data = "héllo → 世界".encode()
    keys = typed(*(data[i : i + 1] for i in range(len(data))))
    assert keys.text == "héllo → 世界"


def test_enter_sends_and_stops_taking_keys():
    keys = typed(b"fix the tests", b"\r")
    assert keys.submitted and keys.text == "fix the tests"
    keys.feed(b"more")  # after Enter the keys are left for the app
    assert keys.text == "fix the tests"


def test_enter_at_the_end_of_a_burst_sends_it():
    keys = typed(b"run the echo tool\r")  # what tmux send-keys (or a fast typist) delivers
    assert keys.submitted and keys.text == "run the echo tool"


def test_enter_on_an_empty_prompt_sends_nothing():
    keys = typed(b"\r", b"   \r")
    assert not keys.submitted
    keys.feed(b"x")
    assert keys.text == "   x"


def test_line_breaks_inside_a_burst_are_kept_not_sent():
    keys = typed(b"line one\rline two")  # a paste: no bracketed paste before the app runs
    assert not keys.submitted and keys.text == "line one\nline two"
    keys.feed(b"\n")  # Ctrl+J
    assert keys.text == "line one\nline two\n"


def test_escape_sequences_and_control_keys_are_not_text():
    keys = typed(b"ab", b"\x1b[A", b"\x1b", b"\x1bOP", b"\x01\x02", b"c")
    assert keys.text == "abc"


def test_ctrl_c_quits():
    keys = typed(b"abc", b"\x03")
    assert keys.quit
    keys.feed(b"\r")
    assert not keys.submitted


def _visible(ansi: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", ansi)


def test_frame_draws_box_placeholder_status_and_cursor():
    out = frame(100, 20, "", "starting…")
    assert PLACEHOLDER in _visible(out)
    assert "\x1b[17;2H" in out and "╭" + "─" * 96 + "╮" in out  # top border where the app puts it
    assert "\x1b[20;3H" in out and "starting…" in out  # status on the last row
    assert out.endswith("\x1b[18;4H")  # cursor at the start of the input


def test_frame_shows_the_typed_tail_and_the_sent_prompt():
    out = frame(30, 10, "x" * 40, "s")
    assert "x" * 23 in out and "x" * 24 not in out  # a row holds 23 (the cursor takes a cell)
    assert "\x1b[6;2H" in out and "\x1b[9;2H" in out  # the box grew to two rows, as the app's does
    assert out.endswith(f"\x1b[8;{4 + 17}H")  # the cursor after the folded rest
    sent = frame(60, 20, "", "s", sent="first line\nsecond")
    assert "▌" in sent and "first line" in sent and "second" not in sent
    assert PLACEHOLDER[:20] in sent


def test_frame_survives_a_tiny_terminal():
    out = _visible(frame(6, 2, "abcdef", "starting…"))  # a box one cell wide: the cursor's
    assert "abc" not in out and "╭──╮" in out and "st" in out


def test_keys_queued_before_raw_mode_take_a_line_feed_as_enter():
    """Typed right after the shell's Enter, in the cooked mode (ICRNL turned Enter into a
    line feed): the prompt is sent, not given a second line (walk 9)."""
    keys = KeyBuffer()
    keys.feed_queued(b"early at 0.1\n")
    assert keys.submitted and keys.text == "early at 0.1"
    keys = KeyBuffer()
    keys.feed_queued(b"half typed")
    assert not keys.submitted and keys.text == "half typed"
    keys.feed(b"\n")  # once the screen is up, a line feed is Ctrl+J again
    assert not keys.submitted and keys.text == "half typed\n"
