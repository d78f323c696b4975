"""Issue 45's "Done means" for hooks, through the installed `cairn -p` and the fake server:
Claude Code's documented `rm -rf` guard — a bash script reading `.tool_input.command` with jq
and exiting 2 — blocks `rm -rf build` whether it is configured in the project's
`.claude/settings.json` (opted in, trusted) or in cairn's own config with `matcher = "Bash"`;
and an `Edit|Write` PostToolUse formatter reading `jq -r .tool_input.file_path` gets the file's
absolute path. The scripts are as a Claude Code user has them on disk."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, needs_cairn

pytestmark = [
    needs_cairn,
    pytest.mark.skipif(shutil.which("jq") is None or shutil.which("bash") is None, reason="needs jq and bash"),
]

# As Claude Code's hooks guide writes it (.claude/hooks/block-rm.sh).
BLOCK_RM = """#!/bin/bash
COMMAND=$(jq -r '.tool_input.command')

if echo "$COMMAND" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf commands are not allowed" >&2
  exit 2
fi

exit 0
"""
# A formatter's logger, reading the edited file's path as Claude Code documents it.
LOG_PATH = """#!/bin/bash
jq -r '.tool_input.file_path' >> "$CLAUDE_PROJECT_DIR/.claude/edited.log"
"""


def home() -> Path:
    return Path(os.environ["CAIRN_HOME"])


def hook_script(workspace: Path, name: str, body: str) -> Path:
    folder = workspace / ".claude" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def rm_build(workspace: Path, env: dict[str, str] | None = None) -> tuple[object, list[dict]]:
    (workspace / "build").mkdir(exist_ok=True)
    (workspace / "build" / "out.o").write_text("object")
    rm = ("c1", "terminal-execute", {"command": "rm -rf build"})
    with FakeLLMServer([tool_calls([rm]), text("I left build alone.")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "clean up", env=env)
        return out, list(srv.requests)


def test_the_documented_rm_guard_in_claude_settings_blocks_rm_rf(workspace, tmp_path):
    hook_script(workspace, "block-rm.sh", BLOCK_RM)
    entry = {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh'}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [entry]}]}}
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    (home() / "config.toml").write_text("[hooks]\nread_claude_settings = true\n")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "no-user-settings")}
    trusted = cairn("trust", str(workspace), env=env)
    assert trusted.returncode == 0, trusted.stderr
    out, requests = rm_build(workspace, env)
    assert out.returncode == 0, out.stderr
    assert (workspace / "build" / "out.o").read_text() == "object"  # the guard held
    assert tool_results(requests[1])["c1"] == "Error: Blocked: rm -rf commands are not allowed"


def test_the_documented_rm_guard_in_cairns_own_config_blocks_rm_rf(workspace):
    script = hook_script(workspace, "block-rm.sh", BLOCK_RM)
    (home() / "config.toml").write_text(f'[[hooks.PreToolUse]]\nmatcher = "Bash"\ncommand = "{script}"\n')
    out, requests = rm_build(workspace)
    assert out.returncode == 0, out.stderr
    assert (workspace / "build" / "out.o").read_text() == "object"
    assert tool_results(requests[1])["c1"] == "Error: Blocked: rm -rf commands are not allowed"


def test_an_edit_write_post_tool_use_hook_reads_the_absolute_file_path_with_jq(workspace):
    script = hook_script(workspace, "log-path.sh", LOG_PATH)
    (home() / "config.toml").write_text(f'[[hooks.PostToolUse]]\nmatcher = "Edit|Write"\ncommand = "{script}"\n')
    (workspace / "src").mkdir()
    write = ("c1", "filesystem-create", {"filePath": "src/app.py", "content": "x = 1\n"})
    edit = ("c2", "filesystem-edit", {"filePath": "src/app.py", "searchContent": "x = 1", "replaceContent": "x = 2"})
    echo = ("c3", "terminal-execute", {"command": "echo not-a-file"})
    with FakeLLMServer([tool_calls([write]), tool_calls([edit]), tool_calls([echo]), text("done")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "write and edit")
    assert out.returncode == 0, out.stderr
    assert (workspace / "src" / "app.py").read_text() == "x = 2\n"
    logged = (workspace / ".claude" / "edited.log").read_text().splitlines()
    assert logged == [str(workspace / "src" / "app.py")] * 2  # Write then Edit; Bash is not matched
