"""Hooks through the installed `cairn -p` and the fake server (issue 30's "Done means"): a
PreToolUse guard refuses `rm -rf build`, a PostToolUse hook sees `tool_response`, a
UserPromptSubmit hook adds context, a hanging hook is killed with a warning, an untrusted
repository's hook never runs, and a Stop hook's exit 2 makes one more request."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from agent.settings import trust
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn

pytestmark = needs_cairn


def home() -> Path:
    return Path(os.environ["CAIRN_HOME"])


def script(folder: Path, name: str, body: str) -> str:
    """A Python hook script; the command line that runs it (as a TOML literal string)."""
    path = folder / name
    path.write_text("import json, os, sys\nevent = json.load(sys.stdin)\n" + body)
    return f"'{sys.executable} {path}'"


def user_config(body: str) -> None:
    (home() / "config.toml").write_text(body)


def tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def test_a_pre_tool_use_hook_exiting_2_refuses_rm_and_the_model_reads_why(workspace, tmp_path):
    guard = script(
        tmp_path,
        "guard.py",
        "command = event['tool_input'].get('command', '')\n"
        "if command.split()[:1] == ['rm']:\n"
        "    print('rm is not allowed here; use git clean', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    user_config(f'[[hooks.PreToolUse]]\nmatcher = "terminal-execute"\ncommand = {guard}\ntimeout = 30\n')
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("object")
    rm = ("c1", "terminal-execute", {"command": "rm -rf build"})
    with FakeLLMServer([tool_calls([rm]), text("I left build alone.")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "clean up")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert tool_results(requests[1]) == {"c1": "Error: rm is not allowed here; use git clean"}
    assert (workspace / "build" / "out.o").read_text() == "object"
    assert out.stdout == "I left build alone.\n"


def test_a_post_tool_use_hook_sees_the_tool_response(workspace, tmp_path):
    seen = tmp_path / "seen.json"
    logger = script(tmp_path, "log.py", f"open({str(seen)!r}, 'w').write(json.dumps(event))\n")
    user_config(f'[[hooks.PostToolUse]]\nmatcher = "Bash"\ncommand = {logger}\n')
    echo = ("c1", "terminal-execute", {"command": "echo hello-from-the-tool"})
    with FakeLLMServer([tool_calls([echo]), text("Done.")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "say hello")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    event = json.loads(seen.read_text())
    assert event["hook_event_name"] == "PostToolUse" and event["tool_name"] == "Bash"  # Claude Code's name
    assert event["tool_input"] == {"command": "echo hello-from-the-tool"}
    assert event["tool_response"]["stdout"] == "hello-from-the-tool\n"
    assert event["tool_response"]["exitCode"] == 0 and event["tool_response"]["success"] is True
    assert event["cwd"] == str(workspace) and event["session_id"]
    assert "[PostToolUse hook]" not in json.dumps(requests[1])  # it said nothing: the result is the tool's own


def test_a_user_prompt_submit_hook_adds_context_the_model_receives(workspace, tmp_path):
    seen = tmp_path / "prompt.txt"
    add = script(
        tmp_path, "add.py", f"open({str(seen)!r}, 'w').write(event['prompt'])\nprint('CONTEXT-MARKER-7: sprint 42')\n"
    )
    user_config(f"[[hooks.UserPromptSubmit]]\ncommand = {add}\n")
    with FakeLLMServer([text("Noted.")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "what sprint is it?")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    last = requests[0]["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith("what sprint is it?")
    assert "CONTEXT-MARKER-7: sprint 42" in last["content"]
    assert seen.read_text() == "what sprint is it?"


def test_a_hanging_hook_is_killed_at_its_timeout_with_a_visible_warning(workspace, tmp_path):
    pid_file = tmp_path / "pid"
    user_config(f"[[hooks.PreToolUse]]\ncommand = 'sleep 600 & echo $! > {pid_file}; wait'\ntimeout = 1\n")
    echo = ("c1", "terminal-execute", {"command": "echo still-ran"})
    with FakeLLMServer([tool_calls([echo]), text("Done.")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "go", "--output-format", "stream-json")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    notices = [e["message"] for e in events(out.stdout) if e.get("type") == "notice"]
    assert any("timed out after 1 s and was killed" in n for n in notices), notices
    assert json.loads(tool_results(requests[1])["c1"])["stdout"] == "still-ran\n"  # the call went on
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30  # waits for the kill to show, never measures it
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_hook_in_an_untrusted_repositorys_config_does_not_run(workspace, tmp_path):
    marker = tmp_path / "pwned"
    (workspace / ".cairn").mkdir()
    config = workspace / ".cairn" / "config.toml"
    config.write_text(f"[[hooks.UserPromptSubmit]]\ncommand = 'touch {marker}'\n")
    with FakeLLMServer([text("Hi."), text("Hi again.")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hello")
        assert out.returncode == 0, out.stderr
        assert not marker.exists()
        assert "hooks.UserPromptSubmit" in out.stderr and "not trusted" in out.stderr
        # Once the user trusted that content, it runs.
        trust.trust(workspace, trust.digest(config.read_bytes()))
        out = cairn(*base_args(srv, workspace), "-p", "hello")
    assert out.returncode == 0, out.stderr
    assert marker.exists()


def test_a_projects_claude_code_hooks_run_once_opted_in_and_trusted(workspace, tmp_path):
    marker = tmp_path / "claude-hook-ran"
    (workspace / ".claude").mkdir()
    entry = {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [entry]}}))
    user_config("[hooks]\nread_claude_settings = true\n")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "no-user-settings")}
    with FakeLLMServer([text("Hi."), text("Hi again.")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hello", env=env)
        assert out.returncode == 0, out.stderr
        assert not marker.exists() and ".claude/settings.json" in out.stderr and "not trusted" in out.stderr
        trusted = cairn("trust", str(workspace), env=env)
        assert trusted.returncode == 0, trusted.stderr
        assert "Trusted the hooks in .claude/settings.json" in trusted.stdout
        out = cairn(*base_args(srv, workspace), "-p", "hello", env=env)
    assert out.returncode == 0, out.stderr
    assert marker.exists()


def test_a_stop_hook_exiting_2_makes_one_more_request(workspace, tmp_path):
    stop = script(
        tmp_path,
        "stop.py",
        "if not event['stop_hook_active']:\n"
        "    print('run the tests before you finish', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    user_config(f"[[hooks.Stop]]\ncommand = {stop}\n")
    with FakeLLMServer([text("Done."), text("Tests pass. Done.")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "fix it")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert len(requests) == 2
    last = requests[1]["messages"][-1]
    assert last["role"] == "user" and "run the tests before you finish" in last["content"]
    assert requests[1]["messages"][-2] == {"role": "assistant", "content": "Done."}
    assert out.stdout == "Tests pass. Done.\n"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie nobody reaped yet is dead for this purpose
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_claude_code_guard_in_cairns_own_config_blocks(workspace, tmp_path):
    """Issue 43/45: a Claude Code guard hook placed in cairn's own TOML failed open: its `Bash`
    matcher fired, but the script was shown `terminal-execute` and cairn's argument names, so
    the documented `rm -rf` guard let the command through. The payload is Claude Code's now
    (tool_name `Bash`, `tool_input.command`; `file_path`, absolute, for the file tools)."""
    guard = script(
        tmp_path,
        "guard.py",
        "if event['tool_name'] == 'Bash' and 'rm -rf' in event['tool_input'].get('command', ''):\n"
        "    print('Blocked: rm -rf', file=sys.stderr); sys.exit(2)\n"
        "if event['tool_name'] in ('Edit', 'Write'):\n"
        f"    open({str(tmp_path / 'paths.txt')!r}, 'a').write(event['tool_input']['file_path'] + '\\n')\n",
    )
    user_config(f'[[hooks.PreToolUse]]\nmatcher = "Bash|Edit|Write"\ncommand = {guard}\n')
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("object")
    rm = ("c1", "terminal-execute", {"command": "rm -rf build"})
    write = ("c2", "filesystem-create", {"filePath": "notes.txt", "content": "hi\n"})
    with FakeLLMServer([tool_calls([rm]), tool_calls([write]), text("ok")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "clean up")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert (workspace / "build" / "out.o").read_text() == "object"  # the guard held
    assert "Blocked: rm -rf" in tool_results(requests[1])["c1"]
    assert (tmp_path / "paths.txt").read_text() == f"{workspace / 'notes.txt'}\n"  # Claude Code's absolute file_path
