"""The read-only decision word by word (agent/tools/read_only.py), pinned where mutation testing
found it unwatched (issue 36, scripts/mutation.sh).

A command that only reads runs unasked, so a broken branch here either lets a command that
writes through, or loops forever on an option's value, or crashes the approval. Each case
below states the whole answer (why not, and every word that may name a file) because the
workspace check relies on that list being complete.
"""

from __future__ import annotations

import pytest

from agent.tools.read_only import _s, option_paths, read_only


def ro(command: str) -> tuple[str, list[str]]:
    return read_only(tuple(command.split()))


@pytest.mark.parametrize(
    "command, paths",
    [
        # A short option whose value is the next word: the value is skipped, then parsing goes on.
        ("tail -v -n 3 log", ["3", "log"]),
        ("grep -i -e foo a.txt", ["foo", "a.txt"]),
        ("sort -k 2 -t, f", ["2", ",", "f"]),
        ("git diff -U3 a", ["3", "a"]),
        ("git log -n5", ["5"]),
        ("grep -efoo a", ["foo", "a"]),
        # A valued option at the very end has nothing to take: its (empty) glued value only.
        ("grep -A", [""]),
        ("tail -n", [""]),
        # A long option whose value may be the next word.
        ("git log --author bob", ["bob"]),
        ("git log --author=bob", ["bob"]),
        ("git log --author", []),
        ("ls -w 80 --sort size x", ["80", "size", "x"]),
        ("ls --sort=size", ["size"]),
        # A value that looks like an option is checked as one too (and listed: it may be a path).
        ("grep --regexp -v a.txt", ["-v", "a.txt"]),
        ("grep -e -Z a", ["-Z", "a"]),
    ],
)
def test_option_values_are_skipped_and_listed(command, paths):
    assert ro(command) == ("", paths)


@pytest.mark.parametrize(
    "command, why",
    [
        ("grep --regexp --bogus a.txt", "grep --bogus is not known to only read"),
        ("grep -e -X a", "grep -X is not known to only read"),
    ],
)
def test_a_value_that_looks_like_an_option_is_checked_as_one(command, why):
    """`grep -e -X`: had the value been skipped blindly, an unknown option would pass as a value."""
    assert ro(command) == (why, [])


def test_double_dash_ends_options():
    """After `--` every word is an operand: `-v` is a file name, not the option."""
    assert ro("grep -- -v a.txt") == ("", ["-v", "a.txt"])
    assert ro("cat -- --bogus") == ("", ["--bogus"])
    assert ro("cat --") == ("", [])
    # find's primaries after `--` are operands too (and may name files).
    assert ro("find -- ! .") == ("", ["!", "."])


def test_options_after_the_first_operand_are_still_options():
    """GNU tools take options anywhere: `cat a.txt --bogus` must still ask."""
    assert ro("cat a.txt --bogus") == ("cat --bogus is not known to only read", [])
    assert ro("cat a.txt -n") == ("", ["a.txt"])
    assert ro("cat a.txt -x") == ("cat -x is not known to only read", [])
    assert ro("grep -rn x .") == ("", ["x", "."])


def test_a_lone_dash_is_standard_input():
    assert ro("cat -") == ("", ["-"])
    assert ro("cat - -n") == ("", ["-"])


def test_find_primaries_are_options_and_their_values_paths():
    assert ro("find . -name x ! ( -type f )") == ("", [".", "x", "f"])
    assert ro("find . -delete") == ("find -d is not known to only read", [])
    assert ro("find . -exec rm {} ;") == ("find -e is not known to only read", [])


def test_counts_need_a_program_that_takes_them():
    assert ro("head -5 a") == ("", ["a"])
    assert ro("git log -3") == ("", [])
    assert ro("head -5x a") == ("head -5 is not known to only read", [])
    assert ro("cat -5") == ("cat -5 is not known to only read", [])


def test_option_length_limit_is_exclusive():
    """An option of 256 characters is checked letter by letter; one more is refused outright."""
    assert ro("cat -" + "n" * 255) == ("", [])
    assert ro("cat -" + "n" * 256) == ("cat has an option too long to check", [])
    assert ro("cat --" + "n" * 255) == ("cat has an option too long to check", [])


def test_glued_values_may_be_paths():
    """From each `/` or `.` on, and after `=`: any of them may be where the file is."""
    assert ro("grep --file=/etc/passwd x") == ("", ["/etc/passwd", "/passwd", "x"])
    assert ro("rg -g./a pat") == ("", ["./a", "/a", "./a", "pat"])
    assert ro("rg -g/x/y.py pat") == ("", ["/x/y.py", "/y.py", ".py", "/x/y.py", "pat"])
    # The option's own first letters are never a path: `-.` glues nothing before position 2.
    assert ro("cat -A.") == ("cat -. is not known to only read", [])
    assert ro("rg -.") == ("", [])
    # only `/` and `.` start a glued path: a valued option's value is listed once
    assert ro("ls -IXa") == ("", ["Xa"])


def test_operands_with_a_value_name_it_too():
    assert ro("cat cache_dir=/elsewhere") == ("", ["cache_dir=/elsewhere", "/elsewhere"])
    assert ro("cat a=b=/x") == ("", ["a=b=/x", "b=/x"])  # the value is all after the first `=`
    assert ro("cat =x") == ("", ["=x"])
    assert ro("cat a=") == ("", ["a=", ""])


@pytest.mark.parametrize(
    "command, answer",
    [
        ("git show HEAD:src/a.py", ("", ["HEAD:src/a.py", "src/a.py"])),
        ("git show HEAD:src/a:b.py", ("", ["HEAD:src/a:b.py", "src/a:b.py"])),  # the path is all after the first `:`
        ("git --no-pager status", ("", [])),
        ("git --no-pager --no-pager log", ("", [])),
        ("git --no-pager", ("git (no subcommand) is not known to only read", [])),
        ("git", ("git (no subcommand) is not known to only read", [])),
        ("git push", ("git push is not known to only read", [])),
        ("git -C x status", ("git -C is not known to only read", [])),
        ("git branch new", ("git branch with a name creates a branch", [])),
        ("git branch --list foo", ("", ["foo"])),
        ("git branch -l foo", ("", ["foo"])),
        ("git branch -a", ("", [])),
        ("git branch", ("", [])),
        ("git log --bogus=1", ("git log --bogus is not known to only read", [])),
        ("git status -x", ("git status -x is not known to only read", [])),
    ],
)
def test_git_subcommands(command, answer):
    assert ro(command) == answer


@pytest.mark.parametrize(
    "command, answer",
    [
        ("pwd", ("", [])),
        ("pwd x", ("pwd with 1 operands may write", [])),
        ("uniq a", ("", ["a"])),
        ("uniq a b", ("uniq with 2 operands may write", [])),
        ("cd a", ("", ["a"])),
        ("cd a b", ("cd with 2 operands may write", [])),
        ("echo hello /etc -n --anything", ("", [])),
        ("which ls /x", ("", [])),
        ("rm x", ("rm is not known to only read", [])),
    ],
)
def test_operand_limits_and_programs_without_paths(command, answer):
    assert ro(command) == answer


def test_option_paths_of_any_command():
    """What a command that is not read-only may name: operands (and their values), glued values."""
    words = tuple(["rm", "-rf", "/tmp/x", "build", "-o./out", "--file=a.txt", "-", "-I.x", "k=v"])
    assert option_paths(words) == ["/tmp/x", "build", "./out", "/out", "a.txt", ".txt", "-", ".x", "k=v", "v"]
    assert option_paths(("rm", "-.x", "-/")) == []
    assert option_paths(("rm", "-fX", "-fx")) == []
    assert option_paths(("rm",)) == []


def test_option_lists_are_split_on_whitespace():
    assert _s(" a  b\nc ") == frozenset({"a", "b", "c"})
