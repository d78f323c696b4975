"""A subfolder's instruction files, given to the model when it first works under that folder.

Claude Code reads a CLAUDE.md below the working folder (`packages/api/CLAUDE.md` in a
monorepo) not at start but when it first reads a file under that folder, and adds it to what
that read returned. cairn does the same for `filesystem-read`, `filesystem-edit` and
`filesystem-create`: the folders between the workspace and the file are looked at, and each
instruction file found there that was not given yet is appended to the tool's result, once
per session. Appended, never put into the system prompt: the system prompt and the messages
already sent are the cached prefix, and must stay byte-identical.

The files are read as the start's files are (loading.py: the repository's files through
agent/fs/repo_files.py, imports followed inside the repository, the cap).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent.fs.repo_files import within
from agent.instructions.loading import FOLDER_FILES, MAX_INSTRUCTION_CHARS, Loader, project_folders, render

# The tools whose paths bring a folder's instructions, and the argument naming them.
FILE_TOOLS = {"filesystem-read": "filePath", "filesystem-edit": "filePath", "filesystem-create": "filePath"}
NESTED_HEADER = "\n\n<system-reminder>\nThis folder has instructions of its own (follow them for its files):\n"
NESTED_FOOTER = "</system-reminder>"


def call_paths(tool: str, arguments: str) -> list[str]:
    """The paths a file tool's call names (a read may name several); [] for other tools or
    arguments that cannot be made out."""
    key = FILE_TOOLS.get(tool)
    if key is None:
        return []
    try:
        value = json.loads(arguments or "{}").get(key)
    except (ValueError, AttributeError):
        return []
    items = value if isinstance(value, list) else [value]
    paths = [item.get("path") if isinstance(item, dict) else item for item in items]
    return [p for p in paths if isinstance(p, str) and p]


def instructions_for(
    workspace: Path, paths: list[str], loaded: set[str], *, home: Path | None = None
) -> tuple[str, list[str]] | None:
    """(the text to append to the tool result, the files it holds) for the subfolder
    instruction files on the way to `paths` not given yet, or None. `loaded`: the real paths
    already given this session, updated here (so each file is given once)."""
    home = Path(home or Path.home())
    ws = Path(os.path.realpath(workspace))
    folders: list[Path] = []
    for raw in paths:
        target = Path(os.path.normpath(ws / os.path.expanduser(raw)))
        if not within(str(target), str(ws)) or target == ws:
            continue
        last = target if target.is_dir() else target.parent
        for folder in project_folders(ws, last)[1:]:  # the workspace's own were read at start
            if folder not in folders:
                folders.append(folder)
    if not folders:
        return None
    loader = Loader(workspace, home, MAX_INSTRUCTION_CHARS, seen=loaded)
    loader.seen.update(_start_files(loader))
    for folder in folders:
        for name in FOLDER_FILES:
            loader.add(folder / name, loader.root, "local" if name == "CLAUDE.local.md" else "folder")
    loader.finish()
    if not loader.result.files:
        return None
    blocks = [render(found) for found in loader.result.files]
    notes = [f"({notice})\n" for notice in loader.result.notices]
    text = NESTED_HEADER + "".join(blocks + notes) + NESTED_FOOTER
    return text, [found.shown for found in loader.result.files]


def _start_files(loader: Loader) -> set[str]:
    """The real paths of the files a session starts with (the workspace's and those above
    it): a subfolder's `CLAUDE.md -> ../AGENTS.md` is not given twice."""
    return {
        os.path.realpath(folder / name) for folder in project_folders(loader.root, loader.ws) for name in FOLDER_FILES
    }
