"""The prompt on the command line as Claude Code takes it (SPEC §11, issue 46): `cairn "query"`
starts the TUI with it sent, `-p`'s prompt may stand anywhere among the flags, and a first
word naming a subcommand is still that command."""

from __future__ import annotations

import pytest

from agent.cli import main, parse_args
from tests.fakes.llm_server import FakeLLMServer, text
from tests.headless.helpers import base_args, cairn, events, needs_cairn


@pytest.mark.parametrize(
    "argv,headless,tui",
    [
        (["fix the bug"], None, "fix the bug"),
        (["--model", "m", "fix the bug", "--effort", "high"], None, "fix the bug"),
        (["-p", "--output-format", "json", "hi"], "hi", None),
        (["--model", "m", "-p", "--permission-mode", "plan", "x"], "x", None),
        (["-p", "x", "--max-turns", "3"], "x", None),
        (["x", "-p"], "x", None),
        (["-p", "session"], "session", None),  # -p's value: a prompt, whatever it says
        (["-p"], "", None),  # stdin is the whole prompt
        (["list the sessions"], None, "list the sessions"),
    ],
)
def test_a_prompt_anywhere(argv, headless, tui):
    args = parse_args(argv)
    assert args.command is None
    assert (args.prompt, args.prompt_text) == (headless, tui)


@pytest.mark.parametrize(
    "argv,command",
    [
        (["session", "list"], "session"),
        (["--model", "m", "session", "list", "--json"], "session"),
        (["session", "export", "abc", "--format", "md"], "session"),
        (["trust"], "trust"),
        (["trust", "/tmp"], "trust"),
        (["acp"], "acp"),
        (["context", "abc", "--json"], "context"),
    ],
)
def test_a_first_word_naming_a_command_is_the_command(argv, command):
    assert parse_args(argv).command == command


def test_two_prompts_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["-p", "a", "b"])
    assert exc.value.code == 2
    assert "two prompts" in capsys.readouterr().err


def test_help_shows_the_prompt_and_the_commands(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    out = capsys.readouterr().out
    assert "[PROMPT]" in out and "PROMPT " in out
    for command in ("session", "context", "trust", "acp"):
        assert f"cairn {command}" in out


def test_a_subcommand_keeps_its_own_help(capsys):
    with pytest.raises(SystemExit):
        parse_args(["session", "--help"])
    assert "{list,export,import}" in capsys.readouterr().out


def test_headless_flags_without_p_are_refused_with_a_tui_prompt(capsys):
    assert main(["fix the bug", "--output-format", "json"], warm=False) == 2
    assert "apply to a headless run" in capsys.readouterr().err


@needs_cairn
def test_flags_between_p_and_its_prompt(workspace):
    """The walk's failing line: a flag between -p and the prompt made it a 'subcommand'."""
    with FakeLLMServer([text("plain answer"), text("streamed answer")]) as srv:
        out = cairn("-p", "--output-format", "text", *base_args(srv, workspace), "summarise the repo")
        assert out.returncode == 0, out.stderr
        assert out.stdout == "plain answer\n"
        out = cairn(*base_args(srv, workspace), "-p", "again", "--output-format", "stream-json", "--max-turns", "3")
        assert out.returncode == 0, out.stderr
        assert events(out.stdout)[-1]["result"] == "streamed answer"
        sent = [m["content"] for m in srv.requests[0]["messages"] if m["role"] == "user"]
    assert sent == ["summarise the repo"]


@needs_cairn
def test_piped_stdin_is_still_appended(workspace):
    with FakeLLMServer([text("reviewed")]) as srv:
        out = cairn("-p", "--max-turns", "2", *base_args(srv, workspace), "review this", stdin="diff --git a b\n")
        assert out.returncode == 0, out.stderr
        sent = [m["content"] for m in srv.requests[0]["messages"] if m["role"] == "user"]
    assert len(sent) == 1 and sent[0].startswith("review this\n\ndiff --git a b")
