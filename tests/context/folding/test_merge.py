"""Function-block merging by line span (seed 001 §3.1 step 2), on hand-built definitions."""

from __future__ import annotations

from agent.context.folding.merge import MAX_LINE_SPAN, merge_function_blocks
from agent.context.folding.names import FUNCTION, Definition


def fn(name, start, end, depth=0, scope=-1):
    return Definition(FUNCTION, name, start, end, depth, scope)


def test_default_span_is_the_seeds_100():
    assert MAX_LINE_SPAN == 100


def test_consecutive_functions_share_one_line_and_classes_stand_alone():
    definitions = [
        fn("a", 1, 5),
        fn("b", 7, 9),
        Definition("class", "Store", 11, 30),
        fn("get", 12, 15, 1, 2),
        fn("put", 16, 29, 1, 2),
        Definition("interface", "Reader", 32, 35),
        fn("main", 37, 40),
    ]
    assert merge_function_blocks(definitions) == [
        "functions: a, b",
        "class Store",
        "  functions: get, put",
        "interface Reader",
        "functions: main",
    ]


def test_a_run_breaks_when_its_span_would_exceed_max_line_span():
    # Ten 30-line functions back to back: three fit in 90 lines, a fourth would make 120.
    definitions = [fn(f"f{i}", 1 + 30 * i, 30 * (i + 1)) for i in range(10)]
    assert merge_function_blocks(definitions) == [
        "functions: f0, f1, f2",
        "functions: f3, f4, f5",
        "functions: f6, f7, f8",
        "functions: f9",
    ]


def test_span_of_exactly_max_line_span_still_merges():
    assert merge_function_blocks([fn("a", 1, 50), fn("b", 51, 100)]) == ["functions: a, b"]
    assert merge_function_blocks([fn("a", 1, 50), fn("b", 51, 101)]) == ["functions: a", "functions: b"]


def test_a_function_longer_than_the_span_gets_its_own_line():
    definitions = [fn("small", 1, 3), fn("huge", 4, 400), fn("tail", 401, 402)]
    assert merge_function_blocks(definitions) == ["functions: small", "functions: huge", "functions: tail"]


def test_custom_span_and_merging_off():
    definitions = [fn("a", 1, 10), fn("b", 11, 20), fn("c", 21, 30)]
    assert merge_function_blocks(definitions, max_line_span=20) == ["functions: a, b", "functions: c"]
    assert merge_function_blocks(definitions, merge_functions=False) == [
        "functions: a",
        "functions: b",
        "functions: c",
    ]


def test_methods_and_top_level_functions_never_share_a_line():
    definitions = [Definition("class", "A", 1, 10), fn("m", 2, 9, 1, 0), fn("top", 12, 14)]
    assert merge_function_blocks(definitions) == ["class A", "  functions: m", "functions: top"]


def test_repeated_names_in_one_line_are_written_once():
    definitions = [fn("offset", 1, 3), fn("offset", 5, 7), fn("opacity", 9, 11)]
    assert merge_function_blocks(definitions) == ["functions: offset, opacity"]


def test_nothing_in_nothing_out():
    assert merge_function_blocks([]) == []
