"""The bounded-memory primitives: UTF-8-safe pages, tails from the end, the RE2 fallback scan."""

from __future__ import annotations

import os
import random
import re
import time

import pytest

from agent.context.files import grep as grepping
from agent.context.files.reading import read_page, tail_lines

MIXED = "ab中文🙂x\n" + "日本語テキスト 🎉🎉 end\n" + "plain ascii line\n" + "é" * 7 + "\n𝄞 last"


@pytest.fixture
def open_text(tmp_path):
    fds: list[int] = []

    def _open(data: str | bytes) -> int:
        path = tmp_path / f"f{len(fds)}.txt"
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        fds.append(os.open(path, os.O_RDONLY))
        return fds[-1]

    yield _open
    for fd in fds:
        os.close(fd)


# -- read_page --------------------------------------------------------------------------
@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 7, 16, 1000])
def test_pages_never_split_a_character_and_rebuild_the_file(open_text, limit):
    fd = open_text(MIXED)
    data = MIXED.encode()
    pieces, offset = [], 0
    while True:
        page = read_page(fd, offset, limit)
        assert "\ufffd" not in page.content
        assert page.start == offset  # following nextOffset always lands on a boundary
        assert len(page.content.encode()) <= max(limit, 4)
        pieces.append(page.content)
        offset = page.next_offset
        if page.done:
            break
    assert "".join(pieces) == MIXED and offset == len(data)


@pytest.mark.parametrize("offset", range(len(MIXED.encode()) + 1))
def test_any_offset_moves_back_to_a_character_start(open_text, offset):
    fd = open_text(MIXED)
    data = MIXED.encode()
    page = read_page(fd, offset, 5)
    assert page.start <= offset and offset - page.start <= 3
    assert "\ufffd" not in page.content
    assert data[page.start : page.next_offset].decode() == page.content
    assert page.done == (page.next_offset >= len(data))


def test_limit_smaller_than_a_character_still_makes_progress(open_text):
    fd = open_text("🙂🙂")
    page = read_page(fd, 0, 1)
    assert page.content == "🙂" and page.next_offset == 4 and not page.done
    page = read_page(fd, 5, 2)  # inside the second emoji: back to its start, whole emoji
    assert page.start == 4 and page.content == "🙂" and page.done


def test_empty_file_and_offset_past_the_end(open_text):
    empty = read_page(open_text(""), 0, 100)
    assert (empty.content, empty.done, empty.next_offset, empty.size) == ("", True, 0, 0)
    past = read_page(open_text("abc"), 10, 100)
    assert past.content == "" and past.done and past.next_offset == 3


# -- tail_lines -------------------------------------------------------------------------
def _reference_tail(text: str, n: int) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[-n:]) if n else ""


@pytest.mark.parametrize("seed", range(30))
def test_tail_matches_a_reference_on_random_files(open_text, seed, monkeypatch):
    import agent.context.files.reading as reading

    monkeypatch.setattr(reading, "TAIL_BLOCK_BYTES", 7)  # many blocks, boundaries everywhere
    rng = random.Random(seed)
    words = ["", "a", "中文", "🙂", "long " * 5, "\n"]
    text = "".join(rng.choice(words) + ("\n" if rng.random() < 0.5 else "") for _ in range(rng.randint(0, 60)))
    fd = open_text(text)
    for n in (1, 2, 5, 1000):
        tail = tail_lines(fd, n, 1 << 20)
        assert tail.content == _reference_tail(text, n)
        assert not tail.capped
        assert tail.lines == len(tail.content.splitlines())


def test_tail_is_capped_at_whole_lines(open_text):
    text = "".join(f"line {i:04d}\n" for i in range(1000))  # 10 bytes a line
    tail = tail_lines(open_text(text), 500, 95)
    assert tail.capped and tail.content == "".join(f"line {i:04d}\n" for i in range(991, 1000))
    assert tail.lines == 9 and tail.start == 9910


def test_one_line_longer_than_the_cap_is_cut_at_a_character(open_text):
    text = "x\n" + "中" * 1000  # no final newline
    tail = tail_lines(open_text(text), 3, 100)
    assert tail.capped and tail.lines == 1
    assert tail.content == "中" * 33 and len(tail.content.encode()) <= 100


def test_tail_of_an_empty_file(open_text):
    assert tail_lines(open_text(""), 10, 100).content == ""


# -- the RE2 fallback scan --------------------------------------------------------------
def _reference_grep(text: str, pattern: str, max_results: int, context: int, flags=re.I):
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    rx = re.compile(pattern, flags)
    hits = [i for i, line in enumerate(lines) if rx.search(line)]
    out = [
        (i + 1, lines[i], lines[max(0, i - context) : i], lines[i + 1 : i + 1 + context]) for i in hits[:max_results]
    ]
    return len(hits), out


@pytest.mark.parametrize("block", [3, 8, 64, 1 << 20])
@pytest.mark.parametrize("context", [0, 1, 3])
def test_scan_agrees_with_a_line_by_line_reference(open_text, monkeypatch, block, context):
    monkeypatch.setattr(grepping, "SCAN_BLOCK_BYTES", block)
    rng = random.Random(block * 10 + context)
    text = "".join(rng.choice(["error 中", "ok", "", "Error: 🙂 boom", "warn"]) + "\n" for _ in range(200))
    fd = open_text(text)
    regex = grepping.compile_pattern(r"error|^$", case_sensitive=False)
    found = grepping._scan(grepping._blocks(fd), regex, 7, context, time.monotonic() + 30, 30)
    total, expected = _reference_grep(text, r"error|^$", 7, context)
    assert found.total == total
    assert [(h.line, h.content, h.before, h.after) for h in found.hits] == expected


def test_scan_counts_a_line_cut_into_pieces_once(open_text, monkeypatch):
    monkeypatch.setattr(grepping, "SCAN_BLOCK_BYTES", 16)
    monkeypatch.setattr(grepping, "LONG_LINE_BYTES", 32)
    text = "first\n" + "needle " * 40 + "\nneedle again\n"
    regex = grepping.compile_pattern("needle", case_sensitive=True)
    found = grepping._scan(grepping._blocks(open_text(text)), regex, 10, 0, time.monotonic() + 30, 30)
    assert found.total == 2 and [h.line for h in found.hits] == [2, 3]


def test_patterns_re2_refuses_are_refused_with_its_reason():
    with pytest.raises(grepping.ContextFileError, match="invalid pattern.*escape"):
        grepping.compile_pattern(r"(a)\1", case_sensitive=False)
    with pytest.raises(grepping.ContextFileError, match="invalid pattern"):
        grepping.compile_pattern(r"(?<=a)b", case_sensitive=False)
    with pytest.raises(grepping.ContextFileError, match="empty"):
        grepping.compile_pattern("", case_sensitive=False)
    with pytest.raises(grepping.ContextFileError, match="too long"):
        grepping.compile_pattern("a" * 5000, case_sensitive=False)


def test_long_lines_are_shortened():
    assert grepping.shorten("x" * 600) == "x" * 500 + "…"
    assert grepping.shorten(b"ok\r") == "ok"
