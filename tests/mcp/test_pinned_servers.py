"""A trusted project MCP server is trusted with the script it starts (issue 43, class 3): the
workspace's `tools/mcp_server.py` edited after trust is not started, neither at the next
session (it asks again) nor by a restart within this one, until the user trusts it as it is
now; and `/mcp trust` then takes the script as it is. Real stdio servers (tests/fakes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent.mcp.manager import McpManager
from agent.mcp.servers import read_mcp_json, trust_mcp_json
from agent.settings import trust
from agent.settings.config import load_config, load_settings, read_project_config
from tests.conftest import REPO_ROOT

READY_TIMEOUT = 120  # the fake server imports the MCP SDK on a loaded machine


def server_script(workspace: Path, log: Path, word: str) -> None:
    """A workspace's own server: it notes that it started, then serves the fake MCP server."""
    path = workspace / "tools" / "mcp_server.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f"import sys\nopen({str(log)!r}, 'a').write({word!r} + '\\n')\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from tests.fakes.mcp_server import main\nmain([])\n"
    )


def started(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def manager(workspace: Path, notes: list[str]) -> McpManager:
    return McpManager(
        load_settings(workspace), on_tools=lambda tools: None, notify=lambda text, kind: notes.append(text)
    )


SERVER = {"command": sys.executable, "args": ["tools/mcp_server.py"]}


async def test_an_edited_server_script_of_a_trusted_mcp_json_is_not_started(workspace, tmp_path, _isolated_home):
    (_isolated_home / "config.toml").write_text(f"[mcp]\nstartup_timeout = {READY_TIMEOUT}\n")
    log = tmp_path / "starts.log"
    server_script(workspace, log, "original")
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"tools": SERVER}}))
    trust_mcp_json(read_mcp_json(workspace))

    first = manager(workspace, [])
    try:
        await first.wait_ready(READY_TIMEOUT)
        assert [s.state for s in first.status()] == ["ready"] and started(log) == ["original"]

        server_script(workspace, log, "edited")  # a sandboxed write, the model's edit: .mcp.json is unchanged
        # A new session: asked again, nothing started.
        notes: list[str] = []
        second = manager(workspace, notes)
        second.start()
        assert second.connections == {}
        assert any("not trusted" in n and "changed since you trusted it" in n for n in notes), notes
        # This session: a restart does not start the edited script either.
        await first.restart("tools")
        await first.wait_ready(READY_TIMEOUT)
        (status,) = first.status()
        assert status.state == "failed" and "changed since you trusted it" in status.error
        assert started(log) == ["original"]

        # `/mcp trust`: the user trusts it as it is now; then it starts.
        await first.trust_project_servers()
        await first.restart("tools")
        await first.wait_ready(READY_TIMEOUT)
        assert [s.state for s in first.status()] == ["ready"]
        assert started(log) == ["original", "edited"]
    finally:
        await first.close()


async def test_an_edited_server_script_of_a_trusted_project_config_is_not_started(workspace, tmp_path):
    log = tmp_path / "starts.log"
    server_script(workspace, log, "original")
    (workspace / ".cairn").mkdir()
    command, args = json.dumps(SERVER["command"]), ", ".join(json.dumps(a) for a in SERVER["args"])
    servers = f"[mcp.servers.tools]\ncommand = {command}\nargs = [{args}]\n"
    (workspace / ".cairn" / "config.toml").write_text(f"[mcp]\nstartup_timeout = {READY_TIMEOUT}\n{servers}")
    data, raw = read_project_config(workspace, [])
    assert raw is not None
    trust.trust(workspace, trust.config_digest(workspace, raw, data))

    first = manager(workspace, [])
    try:
        await first.wait_ready(READY_TIMEOUT)
        assert [s.state for s in first.status()] == ["ready"] and started(log) == ["original"]
        server_script(workspace, log, "edited")
        loaded = load_config(workspace)  # the next session: the config is untrusted again
        settings = loaded.settings
        assert settings.mcp.servers == {} and loaded.project_trust is not None
        assert "files run" in dict(loaded.project_trust.items)
        await first.restart("tools")
        await first.wait_ready(READY_TIMEOUT)
        (status,) = first.status()
        assert status.state == "failed" and "changed since you trusted it" in status.error
        assert started(log) == ["original"]
    finally:
        await first.close()


def test_a_users_own_server_of_the_same_name_is_not_held_to_an_untrusted_projects_trust(workspace, _isolated_home):
    (_isolated_home / "config.toml").write_text('[mcp.servers.tools]\ncommand = "my-server"\n')
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text('[mcp.servers.tools]\ncommand = "sh"\nargs = ["evil.sh"]\n')
    (spec,) = manager(workspace, []).connections.values()
    assert spec.spec.command == "my-server" and spec.spec.pin is None
