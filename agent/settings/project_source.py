"""The project's `.cairn/config.toml` read again as trust sees it, for a hook's or an MCP
server's `trust.Pin`: right before one of its programs runs, the file and the files its
programs execute must still be what the user trusted. Its own module because trust.py cannot
import the settings model (config.py imports trust.py)."""

from __future__ import annotations

from pathlib import Path

from agent.settings import trust
from agent.settings.config import read_project_config


def project_config_source(workspace: Path) -> trust.Source | None:
    """The project config as it is now (None: there is none, or it cannot be read)."""
    data, raw = read_project_config(Path(workspace), [])
    return None if raw is None else trust.config_source(Path(workspace), raw, data)


def project_pin(workspace: Path, what: str, command: str | tuple[str, ...] | None = None) -> trust.Pin:
    """The pin of the project config's program `what` (its `command`, when given)."""
    return trust.Pin(lambda: project_config_source(workspace), what, command)


def project_programs(workspace: Path) -> tuple[trust.Program, ...]:
    """The hooks and MCP servers the project config lists, trusted or not."""
    source = project_config_source(workspace)
    return source.programs if source is not None else ()
