"""A trusted hook is trusted with the script it runs (issue 43, class 3), through the installed
`cairn -p` and the fake server: editing the script after `cairn trust` makes cairn ask again
(the hook does not run until trusted again), and an edit the model makes unasked in
acceptEdits stops the hook at once, in the same session, before the edited script can run."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn

pytestmark = needs_cairn


def home() -> Path:
    return Path(os.environ["CAIRN_HOME"])


def hook_script(path: Path, log: Path, word: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {word} >> '{log}'\n")


def ran(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_an_edited_script_of_a_trusted_project_hook_asks_again_and_does_not_run(workspace, tmp_path):
    log = tmp_path / "hook.log"
    hook_script(workspace / "scripts" / "on_prompt.sh", log, "original")
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text(
        '[[hooks.UserPromptSubmit]]\ncommand = "sh $CLAUDE_PROJECT_DIR/scripts/on_prompt.sh"\n'
    )
    trusted = cairn("trust", str(workspace))
    assert trusted.returncode == 0, trusted.stderr
    assert "hooks.UserPromptSubmit (.cairn/config.toml): sh $CLAUDE_PROJECT_DIR/scripts/on_prompt.sh" in trusted.stdout
    assert "\n  scripts/on_prompt.sh\n" in trusted.stdout

    with FakeLLMServer([text("one"), text("two"), text("three")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hello")
        assert out.returncode == 0, out.stderr
        assert ran(log) == ["original"]

        hook_script(workspace / "scripts" / "on_prompt.sh", log, "edited")  # the config itself is unchanged
        out = cairn(*base_args(srv, workspace), "-p", "hello")
        assert out.returncode == 0, out.stderr
        assert ran(log) == ["original"]  # the edited script did not run
        assert "hooks.UserPromptSubmit" in out.stderr and "not trusted" in out.stderr and "cairn trust" in out.stderr

        assert cairn("trust", str(workspace)).returncode == 0  # the user looked and trusts it as it is
        out = cairn(*base_args(srv, workspace), "-p", "hello")
    assert out.returncode == 0, out.stderr
    assert ran(log) == ["original", "edited"]


def test_a_claude_code_hook_script_the_model_edits_in_accept_edits_never_runs_edited(workspace, tmp_path):
    """The issue's attack: a trusted `.claude/settings.json` PostToolUse hook runs
    `sh .claude/hooks/format.sh`; in acceptEdits the model edits that script unasked, and the
    hook would run it right after the edit."""
    log = tmp_path / "format.log"
    script = workspace / ".claude" / "hooks" / "format.sh"
    hook_script(script, log, "original")
    entry = {"hooks": [{"type": "command", "command": "sh .claude/hooks/format.sh"}]}
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PostToolUse": [entry]}}))
    (workspace / "README.md").write_text("hello\n")
    (home() / "config.toml").write_text("[hooks]\nread_claude_settings = true\n")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "no-user-settings")}
    trusted = cairn("trust", str(workspace), env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert "hooks.PostToolUse (.claude/settings.json): sh .claude/hooks/format.sh" in trusted.stdout
    assert "\n  .claude/hooks/format.sh\n" in trusted.stdout

    read = ("c1", "filesystem-read", {"filePath": "README.md"})
    edit = (
        "c2",
        "filesystem-edit",
        {"filePath": ".claude/hooks/format.sh", "searchContent": "original", "replaceContent": "edited"},
    )
    with FakeLLMServer([tool_calls([read]), tool_calls([edit]), text("done")]) as srv:
        args = [*base_args(srv, workspace), "--permission-mode", "acceptEdits", "--output-format", "stream-json"]
        out = cairn(*args, "-p", "tidy up", env=env)
    assert out.returncode == 0, out.stderr
    # A trusted hook's script asks even in acceptEdits (the sandbox keeps it read-only, and the
    # edit tool goes past the user instead); with nobody to ask in -p, the edit is refused.
    assert "original" in script.read_text() and "edited" not in script.read_text()
    results = [e for e in events(out.stdout) if e.get("type") == "tool_result"]
    assert results[-1]["refused"] and "a trusted hook or MCP server runs this file" in results[-1]["content"]
    assert "edited" not in ran(log)


def test_a_guard_hook_whose_script_changed_fails_closed(workspace, tmp_path):
    """A PreToolUse guard that cannot run (its script changed mid-session, after the user
    trusted it) must not let the next call through: the call is refused with the reason."""
    log = tmp_path / "guard.log"
    guard = workspace / "scripts" / "guard.sh"
    hook_script(guard, log, "guarded")
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text(
        '[[hooks.PreToolUse]]\nmatcher = "terminal-execute"\ncommand = "sh scripts/guard.sh"\n'
    )
    assert cairn("trust", str(workspace)).returncode == 0
    rewrite = ("c1", "terminal-execute", {"command": "echo 'exit 0' > scripts/guard.sh"})  # unconfined: --yolo
    then = ("c2", "terminal-execute", {"command": "touch made-by-model"})
    with FakeLLMServer([tool_calls([rewrite]), tool_calls([then]), text("done")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "--output-format", "stream-json", "-p", "go")
    assert out.returncode == 0, out.stderr
    assert ran(log) == ["guarded"] and guard.read_text() == "exit 0\n"  # the guard ran once, before the rewrite
    assert not (workspace / "made-by-model").exists()
    result = [e for e in events(out.stdout) if e.get("type") == "tool_result"][-1]
    assert result["content"].startswith("Error: PreToolUse hook") and "changed since you trusted" in result["content"]
