"""A project's `.mcp.json` is trusted for its folder and its content (agent/settings/trust.py, kind
MCP_JSON), never through a symlink: a repository's `.mcp.json -> ../other/.mcp.json` must not
borrow another project's trust and start its servers here."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent.mcp.manager import McpManager
from agent.mcp.servers import read_mcp_json, server_specs, trust_mcp_json
from agent.settings import trust
from agent.settings.config import load_settings
from tests.mcp.conftest import stdio_server


def _write(folder: Path, servers: dict) -> Path:
    path = folder / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def _manager(workspace: Path, notes: list[tuple[str, str]]) -> McpManager:
    return McpManager(
        load_settings(workspace), on_tools=lambda tools: None, notify=lambda text, kind: notes.append((text, kind))
    )


def test_a_symlink_to_another_folders_trusted_mcp_json_is_not_trusted_here(workspace, tmp_path):
    trusted_folder = tmp_path / "trusted-project"
    trusted_folder.mkdir()
    original = _write(trusted_folder, {"fake": stdio_server()})
    trust_mcp_json(read_mcp_json(trusted_folder))
    assert read_mcp_json(trusted_folder).trusted  # there, it is trusted and would start
    assert list(_manager(trusted_folder, []).connections) == ["fake"]

    os.symlink(original, workspace / ".mcp.json")
    state = read_mcp_json(workspace)
    assert state.trusted is False and state.servers == {} and state.sha256 is None
    specs, problems = server_specs(load_settings(workspace), mcp_json=state)
    assert specs == []
    assert any("symlink" in p and str(workspace / ".mcp.json") in p for p in problems), problems
    # The manager a session runs: nothing to start, and the notice says why.
    notes: list[tuple[str, str]] = []
    manager = _manager(workspace, notes)
    manager.start()
    assert manager.connections == {}
    assert any("symlink" in text and kind == "warning" for text, kind in notes), notes
    # `/mcp trust` on the refused file records nothing.
    trust_mcp_json(state)
    assert read_mcp_json(workspace).trusted is False


def test_a_copy_in_another_folder_is_not_trusted_there(workspace, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    _write(other, {"fake": stdio_server()})
    _write(workspace, {"fake": stdio_server()})  # the very same bytes
    trust_mcp_json(read_mcp_json(other))
    assert read_mcp_json(other).trusted is True
    assert read_mcp_json(workspace).trusted is False


def test_a_trusted_mcp_json_whose_content_changes_is_untrusted_again(workspace):
    _write(workspace, {"fake": stdio_server()})
    trust_mcp_json(read_mcp_json(workspace))
    assert read_mcp_json(workspace).trusted is True
    _write(workspace, {"fake": stdio_server("--extra")})
    state = read_mcp_json(workspace)
    assert state.trusted is False
    specs, problems = server_specs(load_settings(workspace), mcp_json=state)
    assert specs == [] and any("not trusted" in p for p in problems)


def test_trusting_the_folders_config_does_not_trust_its_mcp_json_nor_the_other_way(workspace):
    # The same bytes in both files: only the record's kind tells them apart.
    raw = json.dumps({"mcpServers": {"fake": stdio_server()}}).encode()
    (workspace / ".mcp.json").write_bytes(raw)
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_bytes(raw)
    trust.trust(workspace, trust.digest(raw))  # what `cairn trust` records for the config
    assert read_mcp_json(workspace).trusted is False

    other = workspace / "sub"
    other.mkdir()
    (other / ".mcp.json").write_bytes(raw)
    (other / ".cairn").mkdir()
    (other / ".cairn" / "config.toml").write_bytes(raw)
    trust_mcp_json(read_mcp_json(other))
    assert read_mcp_json(other).trusted is True
    assert trust.is_trusted(other, trust.digest(raw)) is False  # the config stays untrusted


def test_older_records_keep_working_for_the_config_and_trust_no_mcp_json(workspace, _isolated_home):
    """A record file of an earlier version: its config trust still holds; its `.mcp.json`
    record (keyed by the file's own path) trusts nothing now, so the user is asked again."""
    raw = _write(workspace, {"fake": stdio_server()}).read_bytes()
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text('model = "openai/x"\n')
    config_sha = trust.digest((workspace / ".cairn" / "config.toml").read_bytes())
    old = {
        "version": 1,
        "folders": {
            str(workspace.resolve()): {"sha256": config_sha, "trusted_at": 1},
            str((workspace / ".mcp.json").resolve()): {"sha256": trust.digest(raw), "trusted_at": 1},
        },
    }
    trust.trust_path().parent.mkdir(parents=True, exist_ok=True)
    trust.trust_path().write_text(json.dumps(old))
    assert load_settings(workspace).model == "openai/x"
    assert read_mcp_json(workspace).trusted is False
    trust_mcp_json(read_mcp_json(workspace))  # rewriting the record keeps the config's trust
    assert read_mcp_json(workspace).trusted is True
    assert load_settings(workspace).model == "openai/x"


def test_an_oversized_mcp_json_is_refused(workspace):
    (workspace / ".mcp.json").write_bytes(b'{"mcpServers": {}, "pad": "' + b"x" * (1024 * 1024) + b'"}')
    state = read_mcp_json(workspace)
    assert state.servers == {} and state.trusted is False
    assert len(state.problems) == 1 and "larger than" in state.problems[0]
