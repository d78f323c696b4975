"""Git worktrees for `cairn --worktree NAME` (SPEC §11): one branch `cairn/NAME` per task, its
checkout beside cairn's data, so two sessions on one repository never trample each other's files.

Where: `<data dir>/worktrees/<repo-id>/<NAME>` (`repo-id`: the main checkout's folder name and
a hash of the repository's git folder). Outside the repository on purpose: nothing in the
user's checkout changes (no folder to exclude, no nested copy of the repository that the main
checkout's test runners, searches and file watchers would walk), and a session in the main
checkout, whose sandbox may write its workspace, cannot write into a worktree's files.

The repository is untrusted: `git worktree add` checks files out, which runs the repository's
post-checkout hook, its fsmonitor and its smudge filters. Every git here runs hardened
(agent/tools/git_guard.py: hooks, fsmonitor and the other programs a config names off, every
filter driver off, no provider keys in its environment).

NAME comes from the user and becomes a folder and a branch: one git ref component, checked
here before git or the file system sees it (`valid_name`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from agent.paths import data_dir
from agent.process.secrets import command_environment
from agent.tools.git_guard import FILTER_KEYS_PATTERN, filters_off, hardened_environment, run_git

BRANCH_PREFIX = "cairn/"
# One ref component, and a folder name on every file system: letters, digits, `.`, `_`, `-`;
# starting with a letter or digit (never `-`: an option to git; never `.`: hidden, `..`).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# A checkout of a large repository takes a while; a hung git must still end.
CHECKOUT_TIMEOUT_SECONDS = 600.0
QUERY_TIMEOUT_SECONDS = 30.0


class WorktreeError(Exception):
    """Why a worktree cannot be made, found or removed: one line for the user."""


class WorktreeRefused(WorktreeError):
    """The user's mistake (a bad NAME, no repository, uncommitted changes without --force):
    a usage error, exit code 2."""


class NotARepository(WorktreeRefused):
    """The folder is in no git work tree."""


class Worktree(BaseModel):
    """A worktree cairn made: its NAME, checkout, branch and the repository it came from."""

    name: str
    path: str  # the checkout's real path (a session's cwd there is this or a folder under it)
    branch: str  # `cairn/NAME`
    repo: str  # the main checkout's real path
    repo_id: str
    created_at: int = 0  # as recorded in the store (ms)
    removed_at: int | None = None  # `cairn worktree remove` ran (the row stays for its sessions)

    def holds(self, folder: str) -> bool:
        """Whether `folder` (a session's cwd) is this worktree or a folder in it."""
        return folder == self.path or folder.startswith(self.path.rstrip("/") + "/")


class Repository(BaseModel):
    """The repository a folder is in, as git sees it."""

    top: str  # the work tree the folder is in (main or linked)
    prefix: str  # the folder below `top` ("" at the top)
    main: str  # the main checkout
    repo_id: str
    filter_keys: list[str]


def valid_name(name: str) -> str:
    """`name` when it can be a worktree's name; else WorktreeError saying what is allowed."""
    if not NAME_PATTERN.fullmatch(name) or ".." in name or name.endswith((".", ".lock")):
        raise WorktreeRefused(
            f"{name!r} is not a worktree name: use letters, digits, '.', '_' and '-' "
            "(up to 64, starting with a letter or digit; no '..', no '/', not ending in '.' or '.lock')."
        )
    return name


def _env() -> dict[str, str]:
    return hardened_environment(command_environment(dict(os.environ)), None, ceiling=False)


def _git(cwd: str, *args: str, filter_keys: Sequence[str] = (), timeout: float = QUERY_TIMEOUT_SECONDS) -> str:
    """stdout of a hardened `git ARGS` in `cwd`; WorktreeError with git's own words when it fails."""
    try:
        done = run_git([*filters_off(filter_keys), *args], cwd, _env(), timeout=timeout)
    except OSError as exc:
        raise WorktreeError(f"git could not run: {exc}") from exc
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WorktreeError(f"git {args[0]} failed: {said[-1] if said else f'exit code {done.returncode}'}")
    return done.stdout.decode("utf-8", "surrogateescape")


def _worktrees(cwd: str) -> list[tuple[str, str]]:
    """(real path, branch ref or "") of every worktree git knows for the repository, main first."""
    found: list[tuple[str, str]] = []
    for record in _git(cwd, "worktree", "list", "--porcelain", "-z").split("\0\0"):
        fields = dict(line.partition(" ")[::2] for line in record.split("\0") if line)
        if "worktree" in fields:
            found.append((os.path.realpath(fields["worktree"]), fields.get("branch", "")))
    return found


def repository(folder: Path) -> Repository:
    """The repository `folder` is in; NotARepository when there is none (or no work tree)."""
    try:
        done = run_git(
            ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--show-prefix"],
            str(folder),
            _env(),
        )
    except OSError as exc:
        raise WorktreeError(f"git could not run: {exc}") from exc
    lines = done.stdout.decode("utf-8", "surrogateescape").split("\n")
    if done.returncode != 0 or len(lines) < 3 or not lines[0]:
        raise NotARepository(f"--worktree needs a git repository, and {folder} is in none (or in no work tree).")
    top, common, prefix = os.path.realpath(lines[0]), os.path.realpath(lines[1]), lines[2]
    listed = _worktrees(top)
    main = listed[0][0] if listed else top
    label = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(main)).lstrip(".-") or "repo"
    repo_id = f"{label}-{hashlib.sha256(common.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"
    return Repository(top=top, prefix=prefix.rstrip("/"), main=main, repo_id=repo_id, filter_keys=_filter_keys(top))


def _filter_keys(top: str) -> list[str]:
    """The filter drivers' keys configured for the repository (exit code 1: none is)."""
    try:
        done = run_git(["config", "--name-only", "--get-regexp", FILTER_KEYS_PATTERN], top, _env())
    except OSError as exc:
        raise WorktreeError(f"git could not run: {exc}") from exc
    return done.stdout.decode("utf-8", "surrogateescape").split() if done.returncode == 0 else []


def worktree_path(repo_id: str, name: str) -> Path:
    return data_dir() / "worktrees" / repo_id / name


class Opened(BaseModel):
    """What `open_worktree` found or made, and where the session starts in it."""

    worktree: Worktree
    made: bool
    workspace: Path


def open_worktree(folder: Path, name: str) -> Opened:
    """The worktree NAME of `folder`'s repository, made on a new branch `cairn/NAME` from HEAD
    (or on that branch, when it is left from an earlier worktree) unless it exists, then
    reused; the session starts in the same folder below its top as `folder` is below its
    checkout's (cairn started in `repo/src` runs in `<worktree>/src`), else at the top."""
    valid_name(name)
    repo = repository(folder)
    path = worktree_path(repo.repo_id, name)
    branch = BRANCH_PREFIX + name
    known = dict(_worktrees(repo.top))
    real = os.path.realpath(path)
    made = Worktree(name=name, path=real, branch=branch, repo=repo.main, repo_id=repo.repo_id)
    if real in known and path.is_dir():
        checked_out = known[real].removeprefix("refs/heads/")
        reused = made.model_copy(update={"branch": checked_out or branch})
        return Opened(worktree=reused, made=False, workspace=_workspace(reused, repo.prefix))
    if path.exists():
        raise WorktreeRefused(f"{path} exists but is not a worktree of {repo.main}; move it away first.")
    if real in known:  # registered, its folder deleted by hand: git forgets it first
        _git(repo.top, "worktree", "prune")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    branch_exists = run_git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], repo.top, _env())
    if branch_exists.returncode == 0:
        args = ["worktree", "add", "--", str(path), branch]
    else:
        args = ["worktree", "add", "-b", branch, "--", str(path), "HEAD"]
    _git(repo.top, *args, filter_keys=repo.filter_keys, timeout=CHECKOUT_TIMEOUT_SECONDS)
    made = made.model_copy(update={"path": os.path.realpath(path)})
    return Opened(worktree=made, made=True, workspace=_workspace(made, repo.prefix))


def _workspace(worktree: Worktree, prefix: str) -> Path:
    inside = Path(worktree.path, prefix) if prefix else Path(worktree.path)
    return inside if inside.is_dir() else Path(worktree.path)


def uncommitted(worktree: Worktree) -> list[str]:
    """`git status --porcelain` lines of the worktree (untracked files included)."""
    keys = _filter_keys(worktree.path)
    return [line for line in _git(worktree.path, "status", "--porcelain", filter_keys=keys).splitlines() if line]


def remove_worktree(worktree: Worktree, *, force: bool) -> str:
    """Remove the checkout, then its branch when merged (or always, with `force`). Refuses
    uncommitted changes unless `force`. Returns what became of the branch, in words."""
    where = worktree.repo if Path(worktree.repo).is_dir() else worktree.path
    if Path(worktree.path).is_dir():
        if not force:
            changes = uncommitted(worktree)
            if changes:
                raise WorktreeRefused(
                    f"worktree {worktree.name} has uncommitted changes ({len(changes)} files); "
                    "commit them, or remove it with --force to discard them."
                )
        _git(where, "worktree", "remove", *(["--force"] if force else []), "--", worktree.path)
    else:
        _git(where, "worktree", "prune")
    try:
        _git(where, "branch", "-D" if force else "-d", "--", worktree.branch)
    except WorktreeError as exc:
        if force:
            raise
        return f"branch {worktree.branch} kept: it is not merged ({exc}); --force deletes it"
    return f"branch {worktree.branch} deleted"
