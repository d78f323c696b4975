"""A call as a Claude Code hook expects it (../shared/FORMATS.md), and its updatedInput back."""

from __future__ import annotations

from pathlib import Path

from agent.hooks.claude_shape import cairn_input, claude_call
from agent.hooks.dispatch import tool_response

WS = Path("/work/project")


def test_terminal_execute_is_bash_with_milliseconds():
    assert claude_call("terminal-execute", {"command": "ls", "timeout": 2.5}, WS) == (
        "Bash",
        {"command": "ls", "timeout": 2500},
    )
    name, data = claude_call("terminal-execute", {"command": "make", "workingDirectory": "sub dir"}, WS)
    assert data == {"command": "cd 'sub dir' && make"}


def test_file_tools_get_claude_codes_argument_names_and_absolute_paths():
    assert claude_call("filesystem-edit", {"filePath": "a.py", "searchContent": "x", "replaceContent": "y"}, WS) == (
        "Edit",
        {"file_path": "/work/project/a.py", "old_string": "x", "new_string": "y"},
    )
    assert claude_call("filesystem-create", {"filePath": "/abs/b.py", "content": "z"}, WS) == (
        "Write",
        {"file_path": "/abs/b.py", "content": "z"},
    )
    assert claude_call("filesystem-read", {"filePath": "a.py", "startLine": 10, "endLine": 19}, WS) == (
        "Read",
        {"file_path": "/work/project/a.py", "offset": 10, "limit": 10},
    )


def test_a_tool_claude_code_lacks_keeps_cairns_name_and_arguments():
    assert claude_call("context-read", {"ref": "r1"}, WS) == ("context-read", {"ref": "r1"})
    assert claude_call("mcp__github__list", {"q": 1}, WS) == ("mcp__github__list", {"q": 1})


def test_updated_input_comes_back_in_cairns_names_over_the_original():
    original = {"filePath": "a.py", "searchContent": "x", "replaceContent": "y"}
    assert cairn_input("filesystem-edit", {"new_string": "z"}, original) == {**original, "replaceContent": "z"}
    assert cairn_input("terminal-execute", {"command": "ls -a", "timeout": 3000}, {"command": "ls"}) == {
        "command": "ls -a",
        "timeout": 3.0,
    }
    assert cairn_input("filesystem-read", {"offset": 5, "limit": 3}, {"filePath": "a.py"}) == {
        "filePath": "a.py",
        "startLine": 5,
        "endLine": 7,
    }


def test_tool_response_is_the_tools_json_object_or_its_text():
    terminal = '{"command": "ls", "stdout": "a\\n", "stderr": "", "exitCode": 0}'
    assert tool_response(terminal, False) == {
        "command": "ls",
        "stdout": "a\n",
        "stderr": "",
        "exitCode": 0,
        "success": True,
    }
    assert tool_response("Error: no such file", True) == {"content": "Error: no such file", "success": False}


def test_background_tasks_and_web_search_in_claude_codes_names():
    """Issue 47's tools as a Claude Code hook knows them: Bash's run_in_background, BashOutput,
    KillShell and WebSearch; a matcher on the older KillBash still finds task-stop."""
    assert claude_call("terminal-execute", {"command": "npm run dev", "background": True}, WS) == (
        "Bash",
        {"command": "npm run dev", "run_in_background": True},
    )
    assert claude_call("task-output", {"taskId": "1", "waitSeconds": 5}, WS) == (
        "BashOutput",
        {"bash_id": "1", "waitSeconds": 5},
    )
    assert claude_call("task-stop", {"taskId": "1"}, WS) == ("KillShell", {"shell_id": "1"})
    assert claude_call("web-search", {"query": "q", "allowedDomains": ["a.org"]}, WS) == (
        "WebSearch",
        {"query": "q", "allowed_domains": ["a.org"]},
    )
    updated = cairn_input("terminal-execute", {"command": "npm run dev", "run_in_background": False}, {"command": "x"})
    assert updated == {"command": "npm run dev", "background": False}
    assert cairn_input("task-stop", {"shell_id": "2"}, {"taskId": "1"}) == {"taskId": "2"}
    from agent.hooks.names import CLAUDE_TOOLS

    assert CLAUDE_TOOLS["KillBash"] == CLAUDE_TOOLS["KillShell"] == "task-stop"
