"""`@` completion: the workspace's paths, and which of them a few typed letters mean.

The listing is what the user would call the project's files: ripgrep's `rg --files` (the
`.gitignore`d left out, hidden files kept but never `.git`, agent/tools/ripgrep.py's
flags), else a bounded walk that skips the usual generated folders. Either stops at
MAX_FILES, so a home directory opened by mistake costs a moment, not a minute. Folders come
from the files' parents (`src/` completes, then its files). It runs in a thread; the popup
keeps one listing for FRESH_S seconds so each keystroke only ranks.

Matching is fuzzy, as in editors' file pickers: the letters in order, anywhere (`apcm` finds
`agent/ui/path_complete.py`). A file whose name starts with the query ranks first (with a
folder typed, `src/a`, a name in that folder starting with `a`; `src/` alone: what is in
it), then one whose name contains it, then a path containing it, then the rest by how
scattered the letters are; shorter paths first among equals.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

MAX_FILES = 50_000
LIST_TIMEOUT_S = 10.0
FRESH_S = 10.0
SKIPPED_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox"}
)
# The token being completed: an `@` at the start or after a space, up to the cursor.
_MENTION = re.compile(r"""(?:^|(?<=\s))@([^\s"'@]*)$""")


def mention_before(text: str) -> tuple[int, str] | None:
    """Where the `@path` being typed at the end of `text` starts, and what follows its `@`."""
    match = _MENTION.search(text)
    return (match.start(), match.group(1)) if match else None


def _rg_files(workspace: Path) -> list[str] | None:
    """`rg --files` in the workspace, at most MAX_FILES; None when rg is missing or fails."""
    from agent.tools.ripgrep import COMMON_FLAGS, locate_rg

    rg = locate_rg()
    if rg is None:
        return None
    try:
        proc = subprocess.Popen(
            [rg, "--files", *COMMON_FLAGS],
            cwd=workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
    except OSError:
        return None
    files: list[str] = []
    try:
        assert proc.stdout is not None  # a pipe
        for line in proc.stdout:
            files.append(line.decode("utf-8", errors="replace").rstrip("\n"))
            if len(files) >= MAX_FILES:
                break
    finally:
        proc.kill()
        proc.wait(LIST_TIMEOUT_S)
        if proc.stdout is not None:
            proc.stdout.close()
    return [f.replace(os.sep, "/") for f in files if f]


def _walked_files(workspace: Path) -> list[str]:
    files: list[str] = []
    for root, dirs, names in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        rel = os.path.relpath(root, workspace)
        for name in sorted(names):
            files.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
            if len(files) >= MAX_FILES:
                return files
    return files


def workspace_paths(workspace: Path) -> list[str]:
    """The workspace's files and their folders (with a trailing `/`), relative, sorted.
    Blocking: call it in a thread."""
    files = _rg_files(workspace)
    if files is None:
        files = _walked_files(workspace)
    folders = set()
    for path in files:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folders.add("/".join(parts[:depth]) + "/")
    return sorted(set(files) | folders)


def _gaps(path: str, query: str) -> int:
    """How many separate runs the query's letters take in `path`, matched from the right
    (names sit at the end), minus one; -1 when they are not all there, in order."""
    at = len(path)
    runs = 0
    previous = -2
    for char in reversed(query):
        at = path.rfind(char, 0, at)
        if at < 0:
            return -1
        if at != previous - 1:
            runs += 1
        previous = at
    return runs - 1


def rank(paths: list[str], query: str, limit: int) -> list[str]:
    """The best `limit` of `paths` for `query` (case-insensitive, see the module docstring)."""
    query = query.lower()
    if not query:
        return sorted(paths, key=lambda p: (p.rstrip("/").count("/"), len(p), p))[:limit]
    head, slash, wanted = query.rpartition("/")
    scored: list[tuple[int, int, int, str]] = []
    for path in paths:
        low = path.lower()
        if low == query:
            continue  # the folder already typed: its files are what is wanted
        gaps = 0 if query in low else _gaps(low, query)
        if gaps < 0:
            continue
        name = low[low.rstrip("/").rfind("/") + 1 :]
        in_folder = not slash or low.startswith(head + slash) or f"/{head}/" in low
        if in_folder and (name.startswith(wanted) if wanted else True):
            tier = 0
        elif wanted and wanted in name:
            tier = 1
        else:
            tier = 2 if query in low else 3
        scored.append((tier, gaps, len(path), path))
    scored.sort()
    return [path for *_, path in scored[:limit]]


def inserted(path: str) -> str:
    """How a chosen path goes into the prompt: `@path`, quoted when it has a space."""
    return f'@"{path}"' if any(ch.isspace() for ch in path) else f"@{path}"
