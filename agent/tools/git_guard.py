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
"""

from __future__ import annotations

import os
import subprocess

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
    env["GIT_OPTIONAL_LOCKS"] = "0"  # a read-only `git status` must not write .git/index
    if ceiling and workspace:
        parent = os.path.dirname(os.path.realpath(workspace))
        env["GIT_CEILING_DIRECTORIES"] = parent
    return env


def hardened_script(command: str) -> str:
    """The shell text that runs `command` with git hardened (the command's own text is unchanged)."""
    return GIT_FUNCTION + command


def _inside(path: str, ws: str) -> bool:
    return within(os.path.realpath(path), ws)


def _rev_parse(cwd: str, env: dict[str, str], *args: str) -> list[str] | None:
    """git's answer in `cwd`, one line per item; None when git says no (no repository here)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired as exc:
        raise OSError("git did not answer in time (its config may be a FIFO)") from exc
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
        for path, what in [*((d, "its git folder") for d in dirs), *((t, "its work tree") for t in top)]:
            if not _inside(path, ws):
                return f"{what} is outside the workspace ({path})"
        for common in dirs[1:]:
            if os.path.exists(os.path.join(common, "objects", "info", "alternates")):
                return "it borrows objects from another repository (objects/info/alternates)"
    return ""
