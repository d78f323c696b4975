"""Which server serves which file: known ones found on PATH, configured ones, disabled ones."""

from __future__ import annotations

from pathlib import Path

from agent.lsp.servers import discover, server_for
from agent.settings.schema import LspSettings


def _which(found: set[str]):
    return lambda name: f"/usr/bin/{name}" if name in found else None


def test_known_servers_found_on_path_serve_their_extensions_in_order():
    specs = discover(LspSettings(), _which({"pyright-langserver", "pylsp", "gopls"}))
    assert server_for(specs, Path("a.py")).name == "pylsp"  # type: ignore[union-attr]
    assert server_for(specs, Path("m.go")).argv() == ["/usr/bin/gopls"]  # type: ignore[union-attr]
    assert server_for(specs, Path("a.ts")) is None  # typescript-language-server is not there
    pyright = next(s for s in specs if s.name == "pyright")
    assert pyright.argv() == ["/usr/bin/pyright-langserver", "--stdio"]


def test_configured_servers_come_first_and_a_known_name_keeps_its_defaults():
    settings = LspSettings(
        servers={
            "mine": {"command": ["my-ls", "--stdio"], "extensions": ["py", ".PYX"]},
            "pylsp": {"enabled": False},
            "gopls": {"command": ["gopls", "-remote=auto"]},
        }
    )
    specs = discover(settings, _which({"my-ls", "pylsp", "gopls"}))
    assert [s.name for s in specs][:2] == ["mine", "gopls"] and "pylsp" not in [s.name for s in specs]
    assert server_for(specs, Path("a.py")).name == "mine"  # type: ignore[union-attr]
    assert server_for(specs, Path("a.pyx")).name == "mine"  # type: ignore[union-attr]
    assert server_for(specs, Path("m.go")).argv() == ["/usr/bin/gopls", "-remote=auto"]  # type: ignore[union-attr]


def test_an_entry_with_nothing_to_run_is_left_out():
    specs = discover(LspSettings(servers={"odd": {"extensions": [".x"]}}), _which(set()))
    assert "odd" not in [s.name for s in specs]
