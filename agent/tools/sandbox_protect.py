"""What a writable sandbox keeps read-only: whatever runs later, outside any sandbox.

A command a rule allows runs with the workspace writable (agent/tools/sandbox.py). What it
writes there must not become code that runs later unconfined: the repository's git folder
(config, hooks, `commondir`, worktrees' and submodules' folders: the user's next `git commit`
and cairn's own git read them), the hooks folder git is configured to use (`core.hooksPath`,
e.g. husky's `.husky/_`, whose hooks run `.husky/pre-commit`), the work-tree files installed
hooks take their commands from (agent/tools/hook_inputs.py), config files git includes,
cairn's and Claude Code's project configuration (`.cairn/`, `.claude/`, `.mcp.json`), what
the caller adds (`extra`: the files trusted hooks and MCP servers execute), and the
virtualenvs and node packages those, and cairn itself, load code from (program_roots.py).

Each is bound read-only as a whole (a folder, not a list of files in it), and every folder
between it and the workspace is made a mount point too (still writable), so neither it nor a
parent can be renamed away (`mv .git .git-orig` fails with EBUSY) to put a planted one in its
place. Where git's configuration lives is decided by git: the git folder from `.git` (a folder
or a `gitdir:` file) and `commondir`, the rest from `git config --list --show-origin`, asked
once through git_guard and again only when a file it came from changes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent.fs.repo_files import within
from agent.tools import git_guard
from agent.tools.hook_inputs import hook_inputs, installed_hooks
from agent.tools.program_roots import own_installation, program_roots

# cairn's own and Claude Code's project configuration: it says what runs (hooks, MCP servers).
CAIRN_CONFIG = (".cairn", ".claude", ".mcp.json")
# The files of that configuration which say what runs: a file tool's edit of one asks even in
# acceptEdits (the rest of `.claude/`, agents, commands and skills, is prompt text a user edits).
CONFIG_THAT_RUNS = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".cairn/config.toml")
GITDIR_POINTER_BYTES = 4096  # a `.git` file is one `gitdir:` line
SUBMODULE_PATHS = r"^submodule\..+\.path$"


@dataclass(frozen=True)
class GitFacts:
    """What git's configuration says about a workspace: paths to keep read-only, and the files
    whose change means git must be asked again."""

    protected: tuple[str, ...] = ()
    watched: tuple[str, ...] = ()
    hook_inputs: tuple[str, ...] = ()  # work-tree files installed hooks read: for the sandbox only


def _real(path: str) -> str:
    return os.path.realpath(path)


def git_dir_of(folder: str) -> str | None:
    """The git folder `folder/.git` names (itself, or a `gitdir:` file's target); None if none."""
    dot_git = os.path.join(folder, ".git")
    if os.path.isdir(dot_git):
        return _real(dot_git)
    if not os.path.isfile(dot_git):
        return None
    try:
        with open(dot_git, "rb") as fh:
            line = fh.read(GITDIR_POINTER_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not line or not line[0].startswith("gitdir:"):
        return None
    return _real(os.path.join(folder, line[0][len("gitdir:") :].strip()))


def common_dir_of(git_dir: str) -> str:
    """The folder shared by a repository's worktrees (`commondir`), or `git_dir` itself."""
    try:
        with open(os.path.join(git_dir, "commondir"), "rb") as fh:
            named = fh.read(GITDIR_POINTER_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return git_dir
    return _real(os.path.join(git_dir, named)) if named else git_dir


def repository_paths(folder: str) -> list[str]:
    """`folder`'s `.git` (a folder or a pointer file), the git folder and the common folder it
    names: what git reads the repository's config and hooks from."""
    dot_git = os.path.join(folder, ".git")
    if not os.path.lexists(dot_git):
        return []
    paths = [dot_git]
    git_dir = git_dir_of(folder)
    if git_dir is not None:
        paths += [git_dir, common_dir_of(git_dir)]
    return paths


def linked_worktree_pointers(common_dir: str) -> list[str]:
    """The `.git` files of a repository's linked worktrees (`worktrees/*/gitdir` names them)."""
    out: list[str] = []
    try:
        names = sorted(os.listdir(os.path.join(common_dir, "worktrees")))
    except OSError:
        return out
    for name in names:
        try:
            with open(os.path.join(common_dir, "worktrees", name, "gitdir"), "rb") as fh:
                out.append(fh.read(GITDIR_POINTER_BYTES).decode("utf-8", "replace").strip())
        except OSError:
            continue
    return [p for p in out if p]


def parse_config_listing(listing: bytes, cwd: str) -> tuple[list[str], list[str], list[str]]:
    """From `git config -z --show-origin --list`: (config files read, files they include, hooks
    paths), as real paths. Relative origins are git's top level's (`cwd`); an include is
    relative to the file that names it; a relative hooks path to the top level."""
    files: list[str] = []
    includes: list[str] = []
    hooks: list[str] = []
    fields = listing.decode("utf-8", "surrogateescape").split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        if not origin.startswith("file:"):
            continue  # "command line:" (git_guard's own), "blob:", "standard input:"
        source = _real(os.path.join(cwd, origin[len("file:") :]))
        if source not in files:
            files.append(source)
        key, _, value = entry.partition("\n")
        key = key.lower()
        if not value:
            continue
        value = os.path.expanduser(value)
        if key == "core.hookspath":
            hooks.append(_real(os.path.join(cwd, value)))
        elif key == "include.path" or (key.startswith("includeif.") and key.endswith(".path")):
            includes.append(_real(os.path.join(os.path.dirname(source), value)))
    return files, includes, hooks


def top_entry(path: str, workspace: str) -> str:
    """The entry directly under the workspace that holds `path` (the workspace for itself)."""
    rel = os.path.relpath(path, workspace)
    return workspace if rel == "." else os.path.join(workspace, rel.split(os.sep, 1)[0])


def read_git_facts(workspace: str, environ: dict[str, str]) -> GitFacts:
    """Ask git (hardened, through git_guard) what its configuration names in `workspace`."""
    ws = _real(workspace)
    protected = repository_paths(ws)
    watched = [os.path.join(ws, ".git"), os.path.join(ws, ".gitmodules")]
    if len(protected) < 3:  # no repository of the workspace's own: nothing of git's to ask
        return GitFacts(tuple(protected), tuple(watched))
    git_dir, common = protected[1], protected[2]
    inputs: list[str] = []
    for folder in dict.fromkeys((git_dir, common)):
        watched += [os.path.join(folder, n) for n in ("config", "config.worktree", "commondir", "worktrees")]
    protected += linked_worktree_pointers(common)
    # This repository's config, whatever git would find from here (a `.git` it does not take
    # for a repository, one above the workspace): named, git reads it and prints its paths whole.
    env = {**git_guard.hardened_environment(environ, ws, ceiling=False), "GIT_DIR": git_dir}
    try:
        listing = git_guard.run_git(["config", "-z", "--show-origin", "--list"], ws, env)
        files, includes, hooks = parse_config_listing(listing.stdout, ws) if listing.returncode == 0 else ([], [], [])
        watched += files + includes
        protected += files + includes + [top_entry(h, ws) for h in hooks if within(h, ws)]
        hooks_dir = hooks[-1] if hooks else os.path.join(common, "hooks")  # the last value is git's
        installed = installed_hooks(hooks_dir)
        watched += [hooks_dir, *installed]
        inputs = hook_inputs(installed, ws, ws)
        if os.path.isfile(os.path.join(ws, ".gitmodules")):
            modules = git_guard.run_git(["config", "-z", "-f", ".gitmodules", "--get-regexp", SUBMODULE_PATHS], ws, env)
            for entry in modules.stdout.decode("utf-8", "surrogateescape").split("\0"):
                _, _, path = entry.partition("\n")
                if path:
                    protected += repository_paths(_real(os.path.join(ws, path)))
    except OSError:
        pass  # no git, or it hangs: what the files themselves say is protected all the same
    return GitFacts(tuple(dict.fromkeys(protected)), tuple(dict.fromkeys(watched)), tuple(inputs))


Stamp = tuple[tuple[str, tuple[int, int, int] | None], ...]


def stamp(paths: Iterable[str]) -> Stamp:
    """What changes when one of `paths` is written, replaced or removed."""
    out: list[tuple[str, tuple[int, int, int] | None]] = []
    for path in paths:
        try:
            st = os.stat(path, follow_symlinks=False)
            out.append((path, (st.st_mtime_ns, st.st_size, st.st_ino)))
        except OSError:
            out.append((path, None))
    return tuple(out)


def nested_repositories(workspace: str) -> list[str]:
    """`.git` of the folders directly in the workspace (a nested clone, a submodule, a worktree)
    and the git folders they name."""
    out: list[str] = []
    try:
        entries = sorted(os.scandir(workspace), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
            out += repository_paths(entry.path)
    return out


def git_entries(workspace: str) -> set[str]:
    """The `.git` entries of the workspace and of the folders directly in it, as they are now.

    What does not exist cannot be bound read-only (bwrap would create it on the real disk), so
    a `.git` a writable sandbox creates where there was none is seen after the command instead
    (`terminal-execute` compares this before and after, and says so): git would run what its
    config and hooks name the next time anyone uses git there."""
    ws = _real(workspace)
    found = {os.path.join(ws, ".git")} if os.path.lexists(os.path.join(ws, ".git")) else set()
    try:
        entries = list(os.scandir(ws))
    except OSError:
        return found
    for entry in entries:
        dot_git = os.path.join(entry.path, ".git")
        if entry.name != ".git" and entry.is_dir(follow_symlinks=False) and os.path.lexists(dot_git):
            found.add(dot_git)
    return found


def protected_paths(workspace: str, candidates: Iterable[str]) -> list[str]:
    """The candidates to bind read-only: inside the workspace, existing, not symlinks (bwrap
    would follow one), and not inside another (the outer one covers it)."""
    ws = _real(workspace)
    kept: list[str] = []
    for raw in candidates:
        path = os.path.abspath(raw)
        if not within(path, ws) or os.path.islink(path) or not os.path.lexists(path) or _real(path) != path:
            continue
        kept.append(path)
    kept = sorted(set(kept))
    return [p for p in kept if not any(q != p and within(p, q) for q in kept)]


def bind_args(workspace: str, paths: list[str]) -> list[str]:
    """bwrap's options: each folder between the workspace and a protected path made a mount
    point of its own (writable, but it cannot be renamed or removed), then the path read-only."""
    ws = _real(workspace)
    args: list[str] = []
    pinned: set[str] = set()
    for path in paths:
        between: list[str] = []
        parent = os.path.dirname(path)
        while parent != ws and within(parent, ws) and parent not in pinned:
            between.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(between):  # the outermost first: a later bind would cover an inner one
            args += ["--bind", folder, folder]
            pinned.add(folder)
        args += ["--ro-bind", path, path]
    return args


class Protection:
    """The read-only part of one workspace's writable sandbox. git is asked once, and again
    only when a file its answer came from changed (a `git init`, a husky install mid-session);
    the folders around it are looked at for every command."""

    def __init__(self, workspace: str | Path, extra: Iterable[str | Path] = ()) -> None:
        self.workspace = _real(str(workspace))
        # A real folder, the name as given: a symlinked file is then seen for what it is (skipped).
        self.extra = [os.path.join(_real(os.path.dirname(os.path.abspath(p))), os.path.basename(p)) for p in extra]
        # The virtualenvs and node packages those files, and cairn itself, load code from.
        self.roots = program_roots([*self.extra, *own_installation()], self.workspace)
        self._lock = threading.Lock()
        self._cached: tuple[Stamp, GitFacts] | None = None

    def git_facts(self) -> GitFacts:
        from agent.process.secrets import command_environment

        with self._lock:
            if self._cached is not None and stamp(self._cached[1].watched) == self._cached[0]:
                return self._cached[1]
            facts = read_git_facts(self.workspace, command_environment(dict(os.environ)))
            self._cached = (stamp(facts.watched), facts)
            return facts

    def paths(self) -> list[str]:
        ws = self.workspace
        candidates = [
            *self.git_facts().protected,
            *self.git_facts().hook_inputs,
            *nested_repositories(ws),
            *(os.path.join(ws, name) for name in CAIRN_CONFIG),
            *self.extra,
            *self.roots,
        ]
        return protected_paths(ws, candidates)

    def bind_args(self) -> list[str]:
        return bind_args(self.workspace, self.paths())

    def edit_reason(self, path: str | Path) -> str:
        """Why a file tool's write to `path` asks even in acceptEdits; "" when it need not.

        The sandbox keeps these read-only; an edit tool is not sandboxed, so the same files
        (the git folders, the hooks path, the configuration that says what runs, the programs
        trusted hooks and MCP servers execute) must go past the user instead."""
        target = _real(os.path.join(self.workspace, str(path)))
        ws = self.workspace
        if any(target == _real(os.path.join(ws, name)) for name in CONFIG_THAT_RUNS):
            return "this file says what cairn runs (hooks, MCP servers)"
        if any(within(target, _real(p)) for p in self.extra):
            return "a trusted hook or MCP server runs this file outside the sandbox"
        if any(within(target, p) for p in self.roots):
            return "a trusted hook, an MCP server or cairn itself loads code from here, outside the sandbox"
        if any(within(target, _real(p)) for p in [*self.git_facts().protected, *nested_repositories(ws)]):
            return "git runs what this holds (its folder, config or hooks path)"
        return ""
