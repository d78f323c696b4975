"""One-line renderings of tool calls and results."""

from __future__ import annotations

import json

from agent.session.models import Message, ToolCall
from agent.ui.widgets.tool_render import format_args, result_body, summarize_result


def call(name: str, args) -> ToolCall:
    return ToolCall(id="c", name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def result(name: str, content: str, status: str = "ok", **meta) -> Message:
    return Message(role="tool", tool_call_id="c", tool_name=name, content=content, status=status, meta=meta)


def test_format_args():
    assert format_args(call("terminal-execute", {"command": "pytest -q"})) == "$ pytest -q"
    assert format_args(call("filesystem-read", {"filePath": "a.py"})) == "a.py"
    assert format_args(call("filesystem-read", {"filePath": "a.py", "startLine": 3, "endLine": 9})) == "a.py:3-9"
    assert (
        format_args(call("filesystem-read", {"filePath": ["a.py", {"path": "b.py", "startLine": 2}]}))
        == "a.py, b.py:2-"
    )
    assert format_args(call("filesystem-edit", {"filePath": "src/x.py", "searchContent": "a"})) == "src/x.py"
    assert format_args(call("filesystem-search", {"pattern": "def ", "path": "src"})) == "'def ' in src"
    assert format_args(call("other", {"k": [1]})) == "k=[1]"
    assert format_args(call("terminal-execute", "{not json")) == "{not json"
    assert len(format_args(call("terminal-execute", {"command": "x" * 500}))) == 100


def test_summaries():
    out = json.dumps({"command": "ls", "stdout": "a\nb\n", "stderr": "", "exitCode": 0})
    assert summarize_result(result("terminal-execute", out)) == "exit 0 · 2 lines"
    assert result_body(result("terminal-execute", out)) == "a\nb"
    read = "📄 a.py (lines 1-2/2)\n1→x = 1\n2→y = 2"
    assert summarize_result(result("filesystem-read", read)) == "2 lines"
    assert summarize_result(result("terminal-execute", "Error: denied [sic]\nmore", "error")) == "Error: denied [sic]"
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n-x = 1\n+x = 2\n+y = 3\n"
    assert summarize_result(result("filesystem-edit", "ok", diff=diff)) == "+2 −1"
    assert summarize_result(result("filesystem-edit", diff)) == "+2 −1"


def test_long_output_is_bounded():
    body = result_body(result("filesystem-search", "\n".join(f"l{i}" for i in range(1000))))
    assert body.splitlines()[-1] == "… 800 more lines"


def test_a_failed_command_shows_its_exit_code_not_its_json():
    content = json.dumps({"command": "false; echo no >&2", "stdout": "", "stderr": "no\n", "exitCode": 2})
    assert summarize_result(result("terminal-execute", content, status="error", exitCode=2)) == "exit 2 · 1 line"
    timed = json.dumps({"command": "sleep 9", "stdout": "a\nb\n", "stderr": "[cairn] timed out", "exitCode": -15})
    assert (
        summarize_result(result("terminal-execute", timed, status="error", timedOut=True))
        == "exit -15 · timed out · 3 lines"
    )
    assert (
        summarize_result(result("terminal-execute", "Error: the user denied running this command", status="error"))
        == "Error: the user denied running this command"
    )


def test_a_one_line_output_is_shown_open_and_a_longer_one_folded():
    from agent.ui.widgets.tool_render import shown_open

    def command(stdout: str, stderr: str = "", code: int = 0) -> Message:
        content = json.dumps({"command": "x", "stdout": stdout, "stderr": stderr, "exitCode": code})
        return Message(
            role="tool",
            tool_call_id="c",
            tool_name="terminal-execute",
            content=content,
            status="error" if code else "ok",
        )

    assert shown_open(command("3 passed in 0.1s\n"))
    assert shown_open(command("", "fatal: not a git repository\n", 128))  # a failure's one line too
    assert not shown_open(command("a\nb\n"))
    assert not shown_open(command(""))  # "(no output)" says nothing the header does not
    assert not shown_open(command("x" * 500))
    read = Message(role="tool", tool_call_id="c", tool_name="filesystem-read", content="📄 a.py (lines 1-1/1)\n1→x")
    assert not shown_open(read)


def test_a_short_one_line_error_is_its_header_alone():
    """It was shown twice: as the collapsed title and again as the open body below it."""
    from agent.ui.widgets.tool_render import one_line

    assert one_line(result("filesystem-read", "Error: no such file: a.py", "error"))
    invalid = (
        "Error: invalid arguments for filesystem-edit: searchContent: missing required field; "
        "replaceContent: missing required field"
    )
    assert one_line(result("filesystem-edit", invalid, "error"))  # too long for a title: whole in the header
    assert summarize_result(result("filesystem-edit", invalid, "error")) == invalid  # not cut at the title's length
    assert not one_line(result("filesystem-read", "Error: no such file\nDid you mean b.py?", "error"))
    assert not one_line(result("filesystem-read", "Error: " + "x" * 200, "error"))  # the title cuts it: body shown
    assert not one_line(result("terminal-execute", "3 passed"))  # a short success keeps its open body
    failed = json.dumps({"command": "false", "stdout": "", "stderr": "", "exitCode": 1})
    assert not one_line(result("terminal-execute", failed, "error"))  # a command's result: its exit code and size
