"""The instruction files a session starts with, found and read as Claude Code finds them.

A Claude Code user's instructions live in several files: their own `~/.claude/CLAUDE.md`, the
project's `CLAUDE.md` (or `.claude/CLAUDE.md`) in the workspace and in the folders above it,
the uncommitted `CLAUDE.local.md`, and the files those `@import`. Reading only the first of
AGENTS.md / CLAUDE.md in the workspace dropped most of them, so the model worked without the
rules the user wrote. Here every one is read, outermost first (the user's own, then the
repository root down to the workspace; in a folder CLAUDE.md, .claude/CLAUDE.md, AGENTS.md,
then CLAUDE.local.md, which Claude Code loads after the shared file), each imported file
right after the file importing it, depth ≤ 5 (imports.py finds them).

Each file is read once: a file reached twice (a symlink `CLAUDE.md -> AGENTS.md`, a CLAUDE.md
whose whole content is `@AGENTS.md`, an import cycle) or with the same text as one already
read is left out. Differences from Claude Code, each to keep a repository from widening
what it reaches:
- the walk up stops at the repository root (the folder holding `.git`), or at the workspace
  when there is none, and never goes above the user's home: a folder above is not the
  project's (a `/tmp/CLAUDE.md` another user planted);
- a repository's files are read through agent/fs/repo_files.py (no symlink out of the
  repository, regular files only, a size cap), and an import they make that leaves the
  repository (`@~/.aws/credentials`, `@/etc/passwd`, `@../../x`) is not followed, with a
  notice: Claude Code asks before following one; cairn follows such imports only from the
  user's own files (`~/.claude/CLAUDE.md`, cairn's `AGENTS.md` in its config folder), read
  with `read_own_file`;
- the text is capped (MAX_INSTRUCTION_CHARS in all): it goes into every request.
What was skipped or cut is a notice, never an error.

Standard library only: it runs on the path to the first screen (agent/settings/config.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from agent.fs.repo_files import FileMissing, RepoFileError, read_own_file, read_repo_file, within
from agent.instructions.imports import import_tokens, trimmed

MAX_INSTRUCTION_CHARS = 40_000  # all instruction text together: it goes into every request
MAX_IMPORT_DEPTH = 5  # Claude Code's: an import of an import … five hops from the file
# In one folder, in this order (CLAUDE.local.md last: the user's own overrides the shared file).
FOLDER_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md", "CLAUDE.local.md")

# What each kind of file is, as the model is told.
KINDS = {
    "user": "your private global instructions for all projects",
    "project": "project instructions, checked into the codebase",
    "local": "your private project instructions, not checked in",
    "folder": "instructions for the files under its folder",
}


@dataclass(frozen=True)
class InstructionFile:
    """One file read. `shown`: its path as the model and the user see it (relative to the
    workspace, `~/…` under the home folder, else absolute); `kind`: a KINDS key or "import";
    `cut`: the text was cut at the cap."""

    shown: str
    kind: str
    text: str
    imported_by: str | None = None
    cut: bool = False

    @property
    def description(self) -> str:
        return f"imported by {self.imported_by}" if self.imported_by else KINDS[self.kind]


@dataclass
class Instructions:
    files: list[InstructionFile] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def user_files() -> list[Path]:
    """The user's own instruction files: Claude Code's (agent/paths.py `claude_dir`), then
    cairn's (config folder)."""
    from agent.paths import claude_dir, config_dir

    return [claude_dir() / "CLAUDE.md", config_dir() / "AGENTS.md"]


def project_root(workspace: Path, home: Path) -> Path:
    """The repository root (the nearest folder up holding `.git`, a folder or a worktree's
    file), never above `home`; the workspace itself when there is none."""
    ws, top = Path(os.path.realpath(workspace)), os.path.realpath(home)
    for folder in (ws, *ws.parents):
        if os.path.lexists(folder / ".git"):
            return folder
        if str(folder) == top:
            break
    return ws


def project_folders(root: Path, workspace: Path) -> list[Path]:
    """The folders from `root` down to the (resolved) `workspace`, both included."""
    parts = workspace.relative_to(root).parts
    return [root.joinpath(*parts[:i]) for i in range(len(parts) + 1)]


def load_instructions(workspace: Path, *, home: Path | None = None, limit: int = MAX_INSTRUCTION_CHARS) -> Instructions:
    """Every instruction file a session in `workspace` starts with (see the module docstring)."""
    home = Path(home or Path.home())
    loader = Loader(workspace, home, limit)
    for path in user_files():
        loader.add(path, None, "user")
    # A workspace that is no folder here (a session recorded on another machine, read back)
    # has no project files: its path must not resolve into whatever repository holds ours.
    folders = project_folders(loader.root, loader.ws) if loader.ws.is_dir() else []
    for folder in folders:
        for name in FOLDER_FILES:
            loader.add(folder / name, loader.root, "local" if name == "CLAUDE.local.md" else "project")
    loader.finish()
    return loader.result


class Loader:
    """One load: what was read (`seen`: real paths; `texts`: contents), the room left under
    the cap, what the cap left out. `root` of a file: the repository it is read from (None:
    the user's own file)."""

    def __init__(self, workspace: Path, home: Path, limit: int, seen: set[str] | None = None) -> None:
        self.ws = Path(os.path.realpath(workspace))
        self.given_ws = Path(os.path.abspath(os.path.expanduser(workspace)))
        self.home = home
        self.root = project_root(workspace, home)
        self.limit = limit
        self.seen: set[str] = seen if seen is not None else set()
        self.texts: set[str] = set()
        self.total = 0
        self.over: list[str] = []
        self.result = Instructions()

    def add(
        self, path: Path, root: Path | None, kind: str, *, imported_by: str | None = None, depth: int = 0
    ) -> InstructionFile | None:
        """Read `path` and then its imports; None when it is absent, refused or already read."""
        key = os.path.realpath(path)
        shown = self.shown(path)
        if key in self.seen:
            return None
        try:
            raw = _read(path, root, self.limit)
        except FileMissing:
            return None
        except RepoFileError as exc:
            self.seen.add(key)
            self.result.notices.append(
                f"Not importing @{shown} (from {imported_by}): it {exc.reason}"
                if imported_by
                else f"Not reading {shown} as {'your' if root is None else 'project'} instructions: it {exc.reason}"
            )
            return None
        self.seen.add(key)
        text = raw.decode("utf-8", errors="replace")
        if not text.strip() or text.strip() in self.texts:
            return None  # empty, or the same text as a file already read (a copy of AGENTS.md)
        self.texts.add(text.strip())
        room = self.limit - self.total
        if room <= 0:
            self.over.append(shown)
            return None
        cut = len(text) > room
        if cut:
            text = text[:room]
            self.over.append(f"{shown} (cut)")
        self.total += len(text)
        found = InstructionFile(shown, "import" if imported_by else kind, text, imported_by, cut)
        self.result.files.append(found)
        self._imports(found, path, root, depth)
        return found

    def _imports(self, importer: InstructionFile, path: Path, root: Path | None, depth: int) -> None:
        tokens = import_tokens(importer.text)
        if tokens and depth >= MAX_IMPORT_DEPTH:
            self.result.notices.append(
                f"Not following the imports of {importer.shown}: deeper than {MAX_IMPORT_DEPTH} imports"
            )
            return
        for token in tokens:
            target = self._target(token, path)
            if not target.exists() and trimmed(token) != token:
                token = trimmed(token)
                target = self._target(token, path)
            if root is not None and not within(os.path.normpath(target), str(root)):
                if os.path.lexists(target):
                    self.result.notices.append(
                        f"Not importing @{token} (from {importer.shown}): it is outside the repository "
                        f"{root}; cairn follows an import outside the repository only from your own "
                        f"instruction files ({self.shown(user_files()[0])})"
                    )
                continue
            if not os.path.lexists(target):
                if "/" in token or "." in token:  # `@param` in prose is no file; `@docs/x.md` was meant as one
                    self.result.notices.append(f"Not importing @{token} (from {importer.shown}): it does not exist")
                continue
            self.add(target, root, "import", imported_by=importer.shown, depth=depth + 1)

    def _target(self, token: str, importer: Path) -> Path:
        if token.startswith("~/"):
            return Path(os.path.normpath(self.home / token[2:]))
        if token.startswith("/"):
            return Path(os.path.normpath(token))
        return Path(os.path.normpath(importer.parent / token))

    def shown(self, path: Path) -> str:
        """`path` relative to the workspace when inside the repository (`../CLAUDE.md` for
        the root's), `~/…` under the home folder, else absolute."""
        text = os.path.normpath(path)
        for ws in (self.given_ws, self.ws):
            if within(text, str(ws)):
                return os.path.relpath(text, ws)
        if within(text, str(self.root)):
            return os.path.relpath(text, self.ws)
        home = os.path.normpath(self.home)
        if within(text, home) and text != home:
            return "~/" + os.path.relpath(text, home)
        return text

    def finish(self) -> None:
        if self.over:
            self.result.notices.append(
                f"Instruction text is capped at {self.limit:,} characters: "
                f"{', '.join(self.over)} {'was' if len(self.over) == 1 else 'were'} left out"
            )


def _read(path: Path, root: Path | None, limit: int) -> bytes:
    """A UTF-8 character is at most 4 bytes: enough bytes for the characters kept."""
    if root is None:
        return read_own_file(path, max_bytes=limit * 4, truncate=True)
    return read_repo_file(root, path, max_bytes=limit * 4, truncate=True, follow_inside=True)


def render(found: InstructionFile) -> str:
    """One file as the model reads it, in the system prompt or after a tool result."""
    label = "Instructions" if found.kind == "user" else "Project instructions"
    cut = f"\n[cut at the {MAX_INSTRUCTION_CHARS:,}-character cap on instructions]" if found.cut else ""
    return (
        f"{label} from {found.shown} ({found.description}; follow them):\n"
        f"<{found.shown}>\n{found.text.rstrip()}{cut}\n</{found.shown}>\n"
    )
