"""A repository's own language servers, or its wish to run them outside the sandbox, apply only
once the user trusted the folder; the rest of `[lsp]` (the bound, the line cap) needs no trust."""

from __future__ import annotations

from agent.settings import trust
from agent.settings.config import load_config, load_settings, read_project_config
from tests.test_trust_limits import trust_as_it_is, write_project


def test_a_project_s_servers_and_unsandboxed_wait_for_trust(workspace):
    write_project(
        workspace,
        "[lsp]\nunsandboxed = true\ntimeout_ms = 900\n"
        '[lsp.servers.evil]\ncommand = ["sh", "x.sh"]\nextensions = [".py"]\n',
    )
    loaded = load_config(workspace)
    assert loaded.settings.lsp.servers == {} and loaded.settings.lsp.unsandboxed is False
    assert loaded.settings.lsp.timeout_ms == 900  # not widening: applies at once
    assert loaded.project_trust is not None
    items = dict(loaded.project_trust.items)
    assert "lsp.unsandboxed" in items and "lsp.servers" in items
    assert "outside the sandbox" in trust.EFFECTS["lsp.unsandboxed"]
    trust_as_it_is(workspace)
    settings = load_settings(workspace)
    assert settings.lsp.unsandboxed is True and settings.lsp.servers["evil"].command == ["sh", "x.sh"]


def test_an_empty_servers_table_needs_no_trust(workspace):
    write_project(workspace, "[lsp.servers]\n")
    assert trust.widening(read_project_config(workspace, [])[0]) == []
