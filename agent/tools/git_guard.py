"""Git that cairn runs without asking: the repository's code-running settings forced off.

"Read-only" is a claim about a program, and git runs programs its repository names: an
fsmonitor on `git status`, textconv and external diff drivers on `git log -p`, clean filters
wherever it hashes the work tree, hooks (`post-index-change`) when it refreshes the index.
Scanning `.git/config` for such keys cannot work (includes, `config.worktree`, a `commondir`
elsewhere, a submodule's config, a file too big to scan), so git is told instead, through
its own command-line configuration (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`, which wins over
every file and reaches the git processes git starts itself), and for what has no such switch
(textconv, per-driver external diffs, filters) through a `git` shell function that adds
`--no-textconv --no-ext-diff`, turns every filter driver git knows off and ignores
submodules. The sandbox (agent/tools/sandbox.py) contains whatever still gets through.

A repository that reaches outside the workspace (a `.git` symlink, a `gitdir:`,
`commondir`, `core.worktree` or object alternates elsewhere) makes git commands ask:
`repository_problem` finds out by asking git itself where its folders are.

This is also the one way cairn starts git itself (`run_git`, `run_git_async`, `WorkspaceGit`
for the condense's git facts, the sandbox's git facts): a process cairn starts on its own
runs unconfined, so it gets the same hardening, argv-side too (`git_argv`: no pager, no
textconv or external diff, no submodules, every filter driver off).
tests/architecture/test_git_spawns.py fails when another module starts `git` itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from agent.fs.repo_files import within

# Forced on every git process a command started unasked runs (and the ones git starts).
HARDENED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("safe.bareRepository", "explicit"),  # a committed bare repository is never picked up
    ("submodule.recurse", "false"),
    ("diff.submodule", "short"),
    ("status.submoduleSummary", "false"),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("core.untrackedCache", "false"),
    # Signature checks (`%G?`, `--show-signature`, a `format.pretty` of the repository's, a
    # signed tag) run a verifier the config names: the command is "false", so a check fails.
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    # Programs git runs for a remote, a password or an editor: none has a place in a read,
    # and a read must not find one of the repository's by accident.
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty value clears the list of helpers
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("gc.auto", "0"),  # no automatic gc (nor its pre-auto-gc hook) after a command
    ("maintenance.auto", "false"),
)
# Variables that would make git run or read something of the repository's choosing.
DROPPED_VARIABLES = (
    "GIT_EXTERNAL_DIFF",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_ASKPASS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
)

# The `git` every hardened command calls: filter drivers git knows are emptied (an empty
# command is "no filter" to git), diff/log/show run without textconv or external diff, and
# status/diff do not look into submodules (whose own filters this function cannot see).
GIT_FUNCTION = r"""git() {
  local -a __cairn_pre=() __cairn_cfg=() __cairn_more=()
  local __cairn_key __cairn_name
  if [ "${1-}" = --no-pager ]; then __cairn_pre=(--no-pager); shift; fi
  while IFS= read -r __cairn_key; do
    __cairn_name=${__cairn_key#filter.}; __cairn_name=${__cairn_name%.*}
    __cairn_cfg+=(-c "filter.$__cairn_name.clean=" -c "filter.$__cairn_name.smudge="
                  -c "filter.$__cairn_name.process=" -c "filter.$__cairn_name.required=false")
  done < <(command git config --name-only --get-regexp '^filter\..+\.(clean|smudge|process)$' 2>/dev/null)
  case "${1-}" in
    diff) __cairn_more=(--no-ext-diff --no-textconv --ignore-submodules=all) ;;
    log|show) __cairn_more=(--no-ext-diff --no-textconv) ;;
    status) __cairn_more=(--ignore-submodules=all) ;;
  esac
  if [ $# -gt 0 ]; then
    local __cairn_sub=$1; shift
    command git ${__cairn_pre[@]+"${__cairn_pre[@]}"} ${__cairn_cfg[@]+"${__cairn_cfg[@]}"} "$__cairn_sub" \
      ${__cairn_more[@]+"${__cairn_more[@]}"} "$@"
  else
    command git ${__cairn_pre[@]+"${__cairn_pre[@]}"}
  fi
}
"""
PROBE_TIMEOUT_SECONDS = 5.0  # git reads its config; a FIFO among its includes must not hang cairn
# What GIT_FUNCTION adds after a subcommand, for the git cairn starts itself (`git_argv`).
SUBCOMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "status": ("--ignore-submodules=all",),
}
FILTER_KEYS_PATTERN = r"^filter\..+\.(clean|smudge|process)$"


def hardened_environment(environ: dict[str, str], workspace: str | None, *, ceiling: bool) -> dict[str, str]:
    """`environ` for a command whose git must not run the repository's programs.

    `ceiling`: git stops looking for a repository at the workspace (it never picks up one
    above it); only for commands that run unasked, whose repository was checked to lie inside."""
    env = {k: v for k, v in environ.items() if k not in DROPPED_VARIABLES}
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    count = max(count, 0)
    for key, value in HARDENED_CONFIG:  # after the user's own: the last one wins
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_PAGER"] = "cat"  # wins over a repository's `pager.<command>` (only ever used on a terminal)
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a read-only `git status` must not write .git/index
    if ceiling and workspace:
        parent = os.path.dirname(os.path.realpath(workspace))
        env["GIT_CEILING_DIRECTORIES"] = parent
    return env


def hardened_script(command: str) -> str:
    """The shell text that runs `command` with git hardened (the command's own text is unchanged)."""
    return GIT_FUNCTION + command


def filters_off(filter_keys: Iterable[str]) -> list[str]:
    """`-c` options that turn off every filter driver named in `filter_keys` (`filter.NAME.clean`
    …, as `git config --name-only` lists them): an empty command is "no filter" to git."""
    out: list[str] = []
    for key in filter_keys:
        name = key[len("filter.") :].rpartition(".")[0]
        if not key.startswith("filter.") or not name:
            continue
        for what, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            option = f"filter.{name}.{what}={value}"
            if option not in out:
                out += ["-c", option]
    return out


def git_argv(args: Sequence[str], filter_keys: Iterable[str] = ()) -> list[str]:
    """The argv of a git cairn runs itself: what GIT_FUNCTION does to a command's git, in argv
    form (no pager, the filters in `filter_keys` off, no textconv, external diff or submodules)."""
    if not args:
        return ["git", "--no-pager"]
    sub, *rest = args
    return ["git", "--no-pager", *filters_off(filter_keys), sub, *SUBCOMMAND_OPTIONS.get(sub, ()), *rest]


def run_git(
    args: Sequence[str], cwd: str, env: dict[str, str], *, timeout: float = PROBE_TIMEOUT_SECONDS
) -> subprocess.CompletedProcess[bytes]:
    """Run git's `args` (hardened by `git_argv`) in `cwd` with `env` (give it a
    `hardened_environment`), without a terminal; OSError when it cannot start or hangs."""
    try:
        return subprocess.run(
            git_argv(args),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired as exc:
        raise OSError("git did not answer in time (its config may be a FIFO)") from exc


async def run_git_async(
    args: Sequence[str], cwd: str, env: dict[str, str], *, timeout: float, filter_keys: Iterable[str] = ()
) -> tuple[int, bytes] | None:
    """`run_git` for the event loop: (exit code, stdout); None when git cannot start or hangs
    (then its process group is killed)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *git_argv(args, filter_keys),
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(OSError):  # the group may be gone already
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        return None
    assert proc.returncode is not None  # communicate() waited for it
    return proc.returncode, out


def _inside(path: str, ws: str) -> bool:
    return within(os.path.realpath(path), ws)


def _linked_worktree(ws: str, dirs: list[str]) -> set[str]:
    """The git folders of a linked worktree that IS the workspace (`cairn -w`, `git worktree
    add`): its admin folder (`<repo>/.git/worktrees/NAME`) and the common folder above it, when
    the admin folder's `gitdir` file points back at the workspace's `.git`. That backlink lives
    outside the workspace, where git wrote it: a repository cannot forge it to borrow another
    repository's folders. Empty otherwise (the folders then ask, as any outside the workspace)."""
    if len(dirs) != 2:
        return set()
    admin, common = (os.path.realpath(d) for d in dirs)
    if os.path.dirname(os.path.dirname(admin)) != common or os.path.basename(os.path.dirname(admin)) != "worktrees":
        return set()
    try:
        with open(os.path.join(admin, "gitdir"), encoding="utf-8") as backlink:
            points_at = backlink.read(4096).strip()
    except OSError:
        return set()
    if os.path.realpath(points_at) != os.path.join(ws, ".git"):
        return set()
    return {dirs[0], dirs[1]}


def _rev_parse(cwd: str, env: dict[str, str], *args: str) -> list[str] | None:
    """git's answer in `cwd`, one line per item; None when git says no (no repository here)."""
    done = run_git(["rev-parse", "--path-format=absolute", *args], cwd, env)
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape").splitlines()


def repository_problem(cwds: list[str], workspace: str, environ: dict[str, str]) -> str:
    """Why git run in these folders may reach outside the workspace; "" when it cannot.

    Asked of git itself, with the configuration the command gets (so a bare repository that
    `safe.bareRepository` refuses is no repository here either) but no ceiling: a repository
    above the workspace (cairn opened in a subfolder) is found, and asks."""
    ws = os.path.realpath(workspace)
    env = hardened_environment(environ, ws, ceiling=False)
    for cwd in cwds:
        folder = cwd
        while True:  # a symlinked .git between the folder and the workspace
            if os.path.islink(os.path.join(folder, ".git")):
                return "its .git is a symlink"
            if not _inside(folder, ws) or os.path.realpath(folder) == ws:
                break
            folder = os.path.dirname(folder)
        if not os.path.isdir(cwd):
            continue  # an earlier part may create it; git then runs where `cd` failed: checked too
        try:
            # One question in the usual case (a work tree); a bare repository or a git folder
            # has no top level, and is asked for its folders alone.
            both = _rev_parse(cwd, env, "--git-dir", "--git-common-dir", "--show-toplevel")
            if both is not None and len(both) == 3:
                dirs, top = both[:2], both[2:]
            else:
                alone = _rev_parse(cwd, env, "--git-dir", "--git-common-dir")
                if alone is None:
                    continue
                dirs, top = alone, []
        except OSError as exc:
            return f"git cannot tell where its repository is ({exc})"
        linked = _linked_worktree(ws, dirs)
        for path, what in [*((d, "its git folder") for d in dirs), *((t, "its work tree") for t in top)]:
            if not _inside(path, ws) and path not in linked:
                return f"{what} is outside the workspace ({path})"
        for common in dirs[1:]:
            if os.path.exists(os.path.join(common, "objects", "info", "alternates")):
                return "it borrows objects from another repository (objects/info/alternates)"
    return ""


class WorkspaceGit:
    """git in the workspace as cairn runs it on its own (the condense's git facts): the
    repository checked once to lie inside the workspace, then every command hardened, with
    the repository's filter drivers off, git stopping at the workspace.

    `open` returns None where git facts must not be gathered: no git, no repository inside,
    or one that reaches outside (a `.git` symlink, cairn opened in a repository's subfolder)."""

    def __init__(self, workspace: str, env: dict[str, str], filter_keys: list[str], timeout: float) -> None:
        self.workspace = workspace
        self.env = env
        self.filter_keys = filter_keys
        self.timeout = timeout

    @classmethod
    async def open(cls, workspace: Path | str, *, timeout: float = PROBE_TIMEOUT_SECONDS) -> WorkspaceGit | None:
        from agent.process.background import in_daemon_thread
        from agent.process.secrets import command_environment

        ws = os.path.realpath(workspace)
        environ = command_environment(dict(os.environ))
        found: list[str] = []

        def check() -> None:
            try:
                found.append(repository_problem([ws], ws, environ))
            except OSError as exc:
                found.append(str(exc))

        await in_daemon_thread(check)
        if not found or found[0]:
            return None
        git = cls(ws, hardened_environment(environ, ws, ceiling=True), [], timeout)
        listed = await git.run("config", "--name-only", "--get-regexp", FILTER_KEYS_PATTERN, check=False)
        git.filter_keys = listed.splitlines() if listed else []
        return git

    async def run(self, *args: str, check: bool = True) -> str | None:
        """stdout of `git ARGS` in the workspace; None when it failed (`check`) or could not run."""
        done = await run_git_async(args, self.workspace, self.env, timeout=self.timeout, filter_keys=self.filter_keys)
        if done is None or (check and done[0] != 0):
            return None
        return done[1].decode("utf-8", "replace")
