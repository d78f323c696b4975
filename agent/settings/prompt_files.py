"""A folder's agents, commands and skills as trust sees them, and whether the folder is trusted.

A repository's Markdown can widen what cairn does: an agent in `.claude/agents/` names its
tools and model, a command in `.claude/commands/` its `allowed-tools` and `model`, a skill
its files. Those widen only in a folder the user trusted (agent/subagents/definitions.py,
agent/commands/invocation.py). Claude Code asks once per folder; cairn pins trust to
content, as for the config: `cairn trust` records these files (path, where a link leads, the
bytes: agent/settings/pins.py) as a record of their own kind (trust.PROMPT_FILES), so a
folder with only Claude Code files can be trusted, and an agent added or edited since (a
`git pull`, the model writing one in acceptEdits) is not trusted until the user trusts the
folder again.

A folder is trusted when its project config is trusted as it is now (what it was before
these files had a record of their own), or when its prompt files are, as they are now.

It only lists and hashes files (each turn that lists agents or runs a command asks).
"""

from __future__ import annotations

import os
from pathlib import Path

from agent.settings import pins, trust

# The folders whose files widen once trusted, relative to the workspace.
FOLDERS = tuple(Path(base, kind) for base in (".claude", ".cairn") for kind in ("agents", "commands", "skills"))
MAX_FILES = 5_000  # more than this cannot be told: never trusted
CONTENT = trust.digest(b"cairn prompt files v1\n")  # what the pinned digest is built on


class TooManyFiles(ValueError):
    """A folder with more prompt files than MAX_FILES: what trusting it covers cannot be told."""


def files(workspace: Path) -> list[Path]:
    """The files (and links, to files or folders) under the prompt folders; a link is listed,
    never followed (where it leads is part of what is pinned). Raises TooManyFiles."""
    root = Path(trust.folder_key(workspace))
    found: list[Path] = []
    for rel in FOLDERS:
        top = root / rel
        if top.is_symlink() or not top.is_dir():
            continue
        for folder, dirs, names in os.walk(top, followlinks=False):
            dirs.sort()
            linked = [d for d in dirs if os.path.islink(os.path.join(folder, d))]  # pinned as links, not walked
            for name in sorted(names + linked):
                found.append(Path(folder, name))
                if len(found) > MAX_FILES:
                    raise TooManyFiles(f"more than {MAX_FILES:,} files under {', '.join(map(str, FOLDERS))}")
    return found


def digest(workspace: Path, listed: list[Path]) -> str:
    """What trusting these files records (and what is compared)."""
    return pins.pinned_digest(CONTENT, listed, Path(trust.folder_key(workspace)))


def trusted_now(workspace: Path) -> bool:
    """The user trusted the folder's prompt files as they are now (False: none, or changed)."""
    try:
        listed = files(workspace)
    except (TooManyFiles, OSError):
        return False
    return bool(listed) and trust.is_trusted(workspace, digest(workspace, listed), trust.PROMPT_FILES)


def folder_trusted(workspace: Path) -> bool:
    """Whether the folder's agents, commands and skills may widen what cairn does: its config
    is trusted as it is now, or its prompt files are."""
    from agent.settings.config import read_project_config

    data, raw = read_project_config(workspace, [])
    if raw is not None and trust.is_trusted(workspace, trust.config_digest(workspace, raw, data)):
        return True
    return trusted_now(workspace)
