"""Where cairn keeps its data and config (`CAIRN_HOME` relocates both, SPEC §11).

Standard library only: the first screen (agent/ui/early.py via agent/cli.py) needs the
database's path before pydantic or the settings are imported.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "cairn"


def home_dir() -> Path | None:
    value = os.environ.get("CAIRN_HOME")
    return Path(value).expanduser() if value else None


def claude_dir() -> Path:
    """Claude Code's user folder (its CLAUDE.md, settings.json, commands, agents, skills):
    `$CLAUDE_CONFIG_DIR` as Claude Code reads it, else `~/.claude`. One place, so every reader
    of a Claude Code setup looks where Claude Code does (tests point the variable elsewhere)."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else Path.home() / ".claude"


def data_dir() -> Path:
    home = home_dir()
    if home is not None:
        return home
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    home = home_dir()
    if home is not None:
        return home
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False))


def db_path() -> Path:
    return data_dir() / "sessions.db"


def trust_path() -> Path:
    """Which project configs the user trusted, and with what content (agent/settings/trust.py)."""
    return data_dir() / "trusted_folders.json"


def exports_dir() -> Path:
    """Where `/export` writes when given no file name: not the user's repository."""
    return data_dir() / "exports"
