"""A hook's action is a line for the user (agent/hooks/acted.py → HookActed), stored with the
session so it comes back on resume; what the model is sent does not change. A misspelled
event name gets a "did you mean".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent.hooks.acted import HookAction, actions_of, short_name
from agent.hooks.answer import HookAnswer
from agent.hooks.names import closest_event
from agent.hooks.sources import load_specs
from agent.runtime.ops import Prompt
from agent.settings.config import load_config, load_settings
from tests.fakes.llm_server import text, tool_calls
from tests.hooks.test_hooks_loop import hook, hooks
from tests.loop.conftest import of_type

RM = {"command": "rm -rf build dist"}


async def test_a_blocking_pre_tool_use_hook_is_named_and_the_model_sees_only_its_reason(server, open_runtime, tmp_path):
    command, _ = hook(tmp_path, "bash_guard", "print('Use trash instead of rm -rf', file=sys.stderr)\nsys.exit(2)\n")
    server.add(tool_calls([("c1", "terminal-execute", RM)]), text("ok"))
    runtime = await open_runtime(flags=hooks(PreToolUse={"matcher": "Bash", "command": command}))
    try:
        await runtime.submit(Prompt("clean the build"))
        history = await runtime.history()
        stored = await runtime.history_notices(history)
    finally:
        await runtime.close()
    (line,) = of_type(runtime.events, "hook_acted")
    assert line.message == "Blocked by PreToolUse hook bash_guard.py: Use trash instead of rm -rf"
    assert (line.hook_event_name, line.hook, line.action) == ("PreToolUse", "bash_guard.py", "blocked")
    # The model gets the refusal as before, never the line.
    (result,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "Use trash instead of rm -rf" in result["content"] and "bash_guard" not in result["content"]
    assert [(n.source, n.text) for n in stored] == [("hook", line.message)]
    assert stored[0].after_id == history[1].id  # after the assistant message whose call it blocked


async def test_a_hook_that_changes_the_input_says_so(server, open_runtime, tmp_path):
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "echo safe"}}}
    command, _ = hook(tmp_path, "rewrite", f"print({json.dumps(answer)!r})\n")
    server.add(tool_calls([("c1", "terminal-execute", RM)]), text("ok"))
    runtime = await open_runtime(flags=hooks(PreToolUse={"matcher": "Bash", "command": command}))
    try:
        await runtime.submit(Prompt("clean"))
    finally:
        await runtime.close()
    (line,) = of_type(runtime.events, "hook_acted")
    assert line.message == "Input of terminal-execute changed by PreToolUse hook rewrite.py"


async def test_context_a_prompt_hook_adds_is_counted_and_still_sent(server, open_runtime, tmp_path):
    command, _ = hook(tmp_path, "branch", "print('Branch: main\\nahead 2\\nclean')\n")
    server.add(text("ok"))
    runtime = await open_runtime(flags=hooks(UserPromptSubmit={"command": command}))
    try:
        await runtime.submit(Prompt("status?"))
    finally:
        await runtime.close()
    (line,) = of_type(runtime.events, "hook_acted")
    assert line.message == "UserPromptSubmit hook branch.py added context (3 lines): Branch: main"
    (sent,) = [m for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert "[UserPromptSubmit hook]\nBranch: main" in json.dumps(sent["content"]).replace("\\n", "\n")


async def test_a_blocked_prompt_names_its_hook(server, open_runtime, tmp_path):
    command, _ = hook(tmp_path, "secrets", "print('no secrets in prompts', file=sys.stderr)\nsys.exit(2)\n")
    runtime = await open_runtime(flags=hooks(UserPromptSubmit={"command": command}))
    try:
        await runtime.submit(Prompt("my password is hunter2"))
    finally:
        await runtime.close()
    (error,) = of_type(runtime.events, "turn_error")
    assert error.message == "UserPromptSubmit hook secrets.py blocked the prompt: no secrets in prompts"
    assert of_type(runtime.events, "hook_acted") == []  # one line, the error's


def test_short_names_are_the_script_not_its_interpreter():
    assert short_name("python3 ~/.claude/hooks/bash_guard.py") == "bash_guard.py"
    assert short_name("uv run --quiet scripts/fmt.py --check") == "fmt.py"
    assert short_name("jq -r .tool_input.file_path >> post.log") == "jq"
    assert short_name("FOO=1 node hooks/lint.js") == "lint.js"
    assert short_name("echo 'unclosed") == "echo"


def test_an_echoed_input_or_a_guard_that_could_not_run_is_no_action():
    original = {"command": "ls"}
    echoed = HookAnswer(updated_input={"command": "ls"})
    assert actions_of("PreToolUse", "h", echoed, "terminal-execute", original) == []
    refused = HookAnswer(warning="did not run: changed", block="did not run: changed")
    assert actions_of("PreToolUse", "h", refused, "terminal-execute", original) == []
    long = HookAnswer(block="x" * 500)
    (action,) = actions_of("PreToolUse", "h", long, "terminal-execute", original)
    assert len(action.message) == 74 and action.message.endswith("…")
    went_on = HookAction("SubagentStop", "h", "went_on", "more tests")
    assert went_on.message == "SubagentStop hook h sent the subagent back to work: more tests"


def test_a_misspelled_event_gets_a_did_you_mean(workspace, tmp_path, monkeypatch):
    assert closest_event("PretoolUse") == "PreToolUse"
    assert closest_event("posttooluse") == "PostToolUse"
    assert closest_event("TeammateIdle") is None
    (Path(os.environ["CAIRN_HOME"]) / "config.toml").write_text(
        '[[hooks.PretoolUse]]\nmatcher = "Bash"\ncommand = "true"\n'
    )
    assert "Unknown config key hooks.PretoolUse ignored (did you mean PreToolUse?)" in load_config(workspace).warnings
    # The same in Claude Code's settings.json.
    claude = tmp_path / "claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"hooks": {"stop": [{"hooks": [{"command": "x"}]}]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    (Path(os.environ["CAIRN_HOME"]) / "config.toml").write_text("")
    (problem,) = load_specs(load_settings(workspace))[1]
    assert problem.endswith("cairn has no stop hook event; those hooks do not run (stop: did you mean Stop?)")


def test_headless_outputs_carry_the_line():
    """`-p` prints it as a `Note:`, stream-json as a notice naming the hook (agent/headless/)."""
    from agent.headless.stream import to_json
    from agent.turn.events import HookActed

    line = HookActed(hook_event_name="PreToolUse", hook="g.py", action="blocked", detail="no", message="Blocked by x")
    assert to_json(line) == {
        "type": "notice",
        "message": "Blocked by x",
        "hook_event_name": "PreToolUse",
        "hook": "g.py",
        "action": "blocked",
        "detail": "no",
    }
