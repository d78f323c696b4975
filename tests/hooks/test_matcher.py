"""Which tool calls a hook's matcher selects: as Claude Code reads it, cairn's names and Claude Code's."""

from __future__ import annotations

import pytest

from agent.hooks.matcher import matches, problem


@pytest.mark.parametrize("matcher", [None, "", "*", "  "])
def test_an_empty_or_star_matcher_selects_every_tool(matcher):
    assert matches(matcher, "terminal-execute")
    assert matches(matcher, "mcp__github__create_issue")


def test_an_exact_name_selects_that_tool_only():
    assert matches("terminal-execute", "terminal-execute")
    assert not matches("terminal-execute", "filesystem-edit")
    assert not matches("terminal", "terminal-execute")  # a whole-name match, not a prefix


def test_a_regex_must_match_the_whole_name():
    assert matches("filesystem-.*", "filesystem-edit")
    assert matches("filesystem-(edit|create)", "filesystem-create")
    assert not matches("filesystem-(edit|create)", "filesystem-read")
    assert matches("mcp__github__.*", "mcp__github__create_issue")
    assert not matches("edit", "filesystem-edit")


@pytest.mark.parametrize(
    ("matcher", "tool"),
    [
        ("Bash", "terminal-execute"),
        ("Edit|Write", "filesystem-edit"),
        ("Edit|Write", "filesystem-create"),
        ("Read", "filesystem-read"),
        ("Grep", "filesystem-search"),
        ("Glob", "filesystem-find"),
        ("WebFetch", "web-fetch"),
        ("Task", "subagent"),
        ("Edit|MultiEdit|Write", "filesystem-edit"),
    ],
)
def test_claude_code_tool_names_select_cairns_tools(matcher, tool):
    assert matches(matcher, tool)


def test_a_claude_code_name_selects_only_its_own_tool():
    assert not matches("Bash", "filesystem-edit")
    assert not matches("Edit|Write", "terminal-execute")
    assert not matches("Read", "filesystem-edit")


def test_an_invalid_regex_matches_only_that_exact_name_and_is_reported():
    assert not matches("terminal-execute(", "terminal-execute")
    assert matches("weird(", "weird(")
    assert problem("weird(") is not None and "not a valid regular expression" in problem("weird(")
    assert problem("Edit|Write") is None and problem(None) is None and problem("*") is None


def test_a_matcher_naming_no_tool_cairn_has_says_which_names():
    from agent.hooks.matcher import unmapped

    tools = ["terminal-execute", "filesystem-edit", "filesystem-create", "mcp__github__create_issue"]
    assert unmapped("Bash", tools) is None and unmapped("Edit|Write", tools) is None
    assert unmapped("terminal-execute", tools) is None and unmapped("*", tools) is None and unmapped("", tools) is None
    assert unmapped("mcp__slack__post", tools) is None  # a server may connect later
    assert unmapped("Read", tools) is not None  # Claude Code's name of a tool this agent does not offer
    assert "NotebookEdit" in (unmapped("Edit|NotebookEdit", tools) or "")
    assert "never runs" in (unmapped("NotebookEdit", tools) or "")
    assert unmapped("Edit.*", tools) is None and unmapped("Note.*", tools) is not None
