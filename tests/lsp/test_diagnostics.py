"""What an edit introduced: the diff of diagnostics before and after, and its lines."""

from __future__ import annotations

from agent.lsp.diagnostics import introduced, parse, report


def _item(line: int, message: str, severity: int | None = 1, source: str = "pyflakes") -> dict:
    item: dict = {"range": {"start": {"line": line, "character": 4}}, "message": message, "source": source}
    if severity is not None:
        item["severity"] = severity
    return item


def test_only_what_is_new_is_reported_though_old_ones_moved():
    before = parse([_item(3, "undefined name 'a'"), _item(9, "'os' imported but unused", 2)])
    # Two lines were added above: the old diagnostics moved, one new error appeared.
    after = parse(
        [_item(5, "undefined name 'a'"), _item(11, "'os' imported but unused", 2), _item(1, "undefined name 'b'")]
    )
    text = report("pylsp", "x.py", before, after, cap=10)
    assert (
        text == "Diagnostics (pylsp): this edit introduced 1 error in x.py:\n  2:5 error: undefined name 'b' [pyflakes]"
    )


def test_a_second_copy_of_an_old_error_is_new():
    before = parse([_item(1, "undefined name 'a'")])
    after = parse([_item(1, "undefined name 'a'"), _item(7, "undefined name 'a'")])
    assert [d.line for d in introduced(before, after)] == [8]


def test_a_fix_says_how_many_errors_went_and_nothing_else():
    before = parse([_item(3, "undefined name 'a'"), _item(9, "'os' imported but unused", 2)])
    after = parse([_item(9, "'os' imported but unused", 2)])
    assert report("pylsp", "x.py", before, after, cap=10) == "Diagnostics (pylsp): fixed 1 error in x.py; none new."
    assert report("pylsp", "x.py", after, after, cap=10) == ""


def test_errors_first_capped_and_hints_ignored_and_text_inert():
    after = parse(
        [_item(n, f"warn {n}", 2) for n in range(8)]
        + [_item(20 + n, f"err {n}") for n in range(5)]
        + [_item(40, "just a hint", 4), _item(41, "no severity: an error", None), {"message": 7}, "junk"]  # type: ignore[list-item]
        + [_item(50, "evil \x1b]52;c;aGk=\x07 text\nsecond line", 1, source="x\x1b[2J")]
    )
    text = report("srv", "x.py", [], after, cap=10)
    lines = text.splitlines()
    assert lines[0] == "Diagnostics (srv): this edit introduced 7 errors, 8 warnings in x.py:"
    assert all(" error: " in line for line in lines[1:8]) and " warning: " in lines[8]
    assert lines[-1] == "  … and 5 more"
    assert "hint" not in text and "no severity: an error" in text
    evil = next(line for line in lines if "evil" in line)
    assert "text second line" in evil  # one line
    assert "\x1b" not in text and "\x07" not in text
