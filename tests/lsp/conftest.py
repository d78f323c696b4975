from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent.lsp.manager import LspManager
from agent.settings.schema import LspSettings
from agent.tools.sandbox import Sandbox

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "lsp_server.py"
PYLSP = Path(sys.executable).parent / "pylsp"


def fake_settings(mode: str, *extra: str, **lsp) -> LspSettings:
    """`[lsp]` with the fake server (tests/fakes/lsp_server.py) in `mode` for .py files."""
    # Its source rides on the command line: the file may lie in a folder the sandbox hides (a
    # clone under /tmp), as an installed server does not.
    command = [sys.executable, "-c", FAKE.read_text(encoding="utf-8"), mode, *extra]
    return LspSettings(
        servers={"fake": {"command": command, "extensions": [".py"]}, "pylsp": {"enabled": False}}, **lsp
    )


def no_path(name: str) -> str | None:
    """`which` on a machine with no language server: only absolute commands are found."""
    return name if Path(name).is_absolute() and Path(name).exists() else None


@pytest.fixture
async def make_manager(workspace):
    """Managers for `workspace` (sandboxed unless asked otherwise), closed after the test."""
    made: list[LspManager] = []

    def _make(settings: LspSettings, sandboxed: bool = True) -> LspManager:
        sandbox = Sandbox.for_folder(workspace) if sandboxed else None
        manager = LspManager(settings, workspace, sandbox, which=no_path)
        made.append(manager)
        return manager

    yield _make
    for manager in made:
        await manager.close()
