"""A cloned repository must not run code through commands cairn runs without asking.

Each attack is built the way it was found: real git, real repositories (a bare repository
committed and cloned, configs, hooks, attributes), then the command the model would ask for,
through the registry as the loop calls it. Two setups for every attack:
- `sandbox`: the default, read-only git runs unasked in bubblewrap;
- `unconfined`: no sandbox on the machine, and the user let a rule run git unconfined
  (`[sandbox] rules = "off"`, `allow_commands = ["git", "cd"]`): git's own hardening alone.
The evil program prints a mark and touches a file outside the workspace: the mark in the
output, or the file, proves code ran. Where the repository reaches outside the workspace,
the command must ask instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent.settings.schema import SandboxSettings
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover
from tests.hostile.conftest import execute

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("bash") is None, reason="git and bash are needed"
)
MARK = "CAIRN-PWNED"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def evil(marker: Path) -> str:
    """A program, as a repository's config would name it: prints the mark, touches `marker`."""
    return f"echo {MARK}; echo {MARK} >&2; touch {marker}; true"


def repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    for rel, text in (files or {"f.txt": "one\n"}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git("add", "-A", cwd=path)
    git("commit", "-qm", "first", cwd=path)
    return path


def touch_later(path: Path) -> None:
    """Change a tracked file so status and diff must look at it (clean filters, textconv)."""
    path.write_text(path.read_text() + "two\n")


# -- the attacks ---------------------------------------------------------------------------------
# Each builds the workspace under `root` and returns (workspace, command).


def bare_repo_committed_and_cloned(root: Path, marker: Path) -> tuple[Path, str]:
    """The reported one: `sub/` is a bare repository committed into the project; its
    info/attributes and config set a textconv driver. `cd sub && git log -p` picks it up."""
    source = repo(root / "source")
    bare = source / "sub"
    git("init", "-q", "--bare", str(bare), cwd=source)
    (bare / "info").mkdir(exist_ok=True)
    (bare / "info" / "attributes").write_text("* diff=evil\n")
    git("config", "-f", str(bare / "config"), "diff.evil.textconv", evil(marker) + " cat", cwd=source)
    work = root / "seed"
    repo(work, {"a.txt": "x\n"})
    git("push", "-q", str(bare), "HEAD:refs/heads/main", cwd=work)
    git("add", "-A", "-f", "sub", cwd=source)
    git("commit", "-qm", "vendored", cwd=source)
    ws = root / "ws"
    git("clone", "-q", str(source), str(ws), cwd=root)
    assert (ws / "sub" / "config").read_text().count("textconv")
    return ws, "cd sub && git log -p"


def oversized_config(root: Path, marker: Path) -> tuple[Path, str]:
    """A .git/config over 1 MiB with the fsmonitor after the first MiB."""
    ws = repo(root / "ws")
    with open(ws / ".git" / "config", "a") as fh:
        fh.write("[x]\n" + "".join(f"\tk{i} = {'v' * 60}\n" for i in range(20000)))
        fh.write(f'[core]\n\tfsmonitor = "{evil(marker)}"\n')
    assert (ws / ".git" / "config").stat().st_size > 1024 * 1024
    touch_later(ws / "f.txt")
    return ws, "git status --short"


def worktree_config(root: Path, marker: Path) -> tuple[Path, str]:
    """`extensions.worktreeConfig` with the fsmonitor in config.worktree."""
    ws = repo(root / "ws")
    git("config", "extensions.worktreeConfig", "true", cwd=ws)
    git("config", "--worktree", "core.fsmonitor", evil(marker), cwd=ws)
    touch_later(ws / "f.txt")
    return ws, "git status"


def hook_on_index_change(root: Path, marker: Path) -> tuple[Path, str]:
    """A hook git runs itself when it refreshes the index."""
    ws = repo(root / "ws")
    hook = ws / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\n{evil(marker)}\n")
    hook.chmod(0o755)
    os.utime(ws / "f.txt", (1, 1))  # same content, other stat data: `git diff` refreshes the index
    return ws, "git diff"


def textconv_in_config(root: Path, marker: Path) -> tuple[Path, str]:
    ws = repo(root / "ws", {"f.txt": "one\n", ".gitattributes": "*.txt diff=evil\n"})
    git("config", "diff.evil.textconv", evil(marker) + " cat", cwd=ws)
    touch_later(ws / "f.txt")
    return ws, "git diff && git log -p && git show"


def external_diff(root: Path, marker: Path) -> tuple[Path, str]:
    ws = repo(root / "ws", {"f.txt": "one\n", ".gitattributes": "*.txt diff=ext\n"})
    git("config", "diff.external", evil(marker), cwd=ws)
    git("config", "diff.ext.command", evil(marker), cwd=ws)
    touch_later(ws / "f.txt")
    return ws, "git diff"


def clean_filter(root: Path, marker: Path) -> tuple[Path, str]:
    ws = repo(root / "ws", {"f.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
    git("config", "filter.evil.clean", evil(marker) + " cat", cwd=ws)
    git("config", "filter.evil.required", "true", cwd=ws)
    touch_later(ws / "f.txt")
    return ws, "git status --short && git diff"


def included_config(root: Path, marker: Path) -> tuple[Path, str]:
    ws = repo(root / "ws")
    (ws / "extra.cfg").write_text(f'[core]\n\tfsmonitor = "{evil(marker)}"\n')
    git("config", "include.path", "../extra.cfg", cwd=ws)
    touch_later(ws / "f.txt")
    return ws, "git status"


def submodule_config(root: Path, marker: Path) -> tuple[Path, str]:
    """A submodule's own config (in .git/modules/) sets an fsmonitor; status looks into it."""
    inner = repo(root / "inner")
    ws = repo(root / "ws")
    git("submodule", "add", "-q", str(inner), "lib", cwd=ws)
    git("commit", "-qm", "sub", cwd=ws)
    git("config", "-f", str(ws / ".git" / "modules" / "lib" / "config"), "core.fsmonitor", evil(marker), cwd=ws)
    touch_later(ws / "lib" / "f.txt")
    return ws, "git status && git diff"


def sign_head(ws: Path) -> None:
    """Replace HEAD by the same commit with a (bogus) PGP signature: checking it runs gpg.program."""
    commit = git("cat-file", "commit", "HEAD", cwd=ws)
    head, _, message = commit.partition("\n\n")
    signature = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    signed = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=ws,
        check=True,
        input=f"{head}\n{signature}\n\n{message}",
        capture_output=True,
        text=True,
    ).stdout.strip()
    git("update-ref", "HEAD", signed, cwd=ws)


def verifier(program: Path, marker: Path) -> Path:
    """A signature verifier, as a repository's gpg.program would name it: prints the mark."""
    program.write_text(f"#!/bin/sh\n{evil(marker)}\n")
    program.chmod(0o755)
    return program


def signature_program(root: Path, marker: Path) -> tuple[Path, str]:
    """A signed commit: `log.showSignature` makes `git log` run the repository's gpg.program."""
    ws = repo(root / "ws")
    sign_head(ws)
    program = verifier(ws / ".git" / "verify", marker)  # run directly, not by a shell: a file of its own
    git("config", "gpg.program", str(program), cwd=ws)
    git("config", "log.showSignature", "true", cwd=ws)
    return ws, "git log"


CONTAINED = [
    bare_repo_committed_and_cloned,
    oversized_config,
    worktree_config,
    hook_on_index_change,
    textconv_in_config,
    external_diff,
    clean_filter,
    included_config,
    submodule_config,
    signature_program,
]


def commondir_elsewhere(root: Path, marker: Path) -> tuple[Path, str]:
    """`.git/commondir` names a repository outside, whose config runs a program."""
    outside = repo(root / "outside")
    git("config", "core.fsmonitor", evil(marker), cwd=outside)
    ws = repo(root / "ws")
    (ws / ".git" / "commondir").write_text(str(outside / ".git") + "\n")
    return ws, "git status"


def worktree_outside(root: Path, marker: Path) -> tuple[Path, str]:
    """core.worktree outside: `git diff` printed a file outside the workspace."""
    outside = root / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret outside\n")
    ws = repo(root / "ws")
    git("config", "core.worktree", str(outside), cwd=ws)
    return ws, "git diff"


def symlinked_git(root: Path, marker: Path) -> tuple[Path, str]:
    other = repo(root / "other")
    git("config", "core.fsmonitor", evil(marker), cwd=other)
    ws = root / "ws"
    ws.mkdir()
    (ws / ".git").symlink_to(other / ".git")
    return ws, "git status"


def gitdir_file_outside(root: Path, marker: Path) -> tuple[Path, str]:
    other = repo(root / "other")
    ws = root / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {other / '.git'}\n")
    return ws, "git log"


def alternates_outside(root: Path, marker: Path) -> tuple[Path, str]:
    other = repo(root / "other")
    ws = repo(root / "ws")
    (ws / ".git" / "objects" / "info" / "alternates").write_text(str(other / ".git" / "objects") + "\n")
    return ws, "git log"


def repository_above(root: Path, marker: Path) -> tuple[Path, str]:
    """cairn opened in a subfolder of a repository: git would read the repository above."""
    top = repo(root / "top", {"ws/f.txt": "x\n"})
    return top / "ws", "git status"


def borrowed_worktree_admin(root: Path, marker: Path) -> tuple[Path, str]:
    """`.git` names another repository's linked-worktree folder: its backlink points at that
    worktree, not at this workspace, so it is no worktree of ours and asks."""
    other = repo(root / "other")
    git("worktree", "add", "-q", str(root / "their-tree"), cwd=other)
    git("config", "core.fsmonitor", evil(marker), cwd=other)
    ws = root / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {other / '.git' / 'worktrees' / 'their-tree'}\n")
    return ws, "git status"


ASKS = [
    commondir_elsewhere,
    worktree_outside,
    symlinked_git,
    gitdir_file_outside,
    alternates_outside,
    repository_above,
    borrowed_worktree_admin,
]


# -- the setups -----------------------------------------------------------------------------------


def sandboxed(ws: Path, approver) -> ToolContext:
    return ToolContext(workspace=ws, permissions=Permissions(approver, workspace=ws), command_timeout=30.0)


def unconfined(ws: Path, approver) -> ToolContext:
    """No sandbox here (bwrap cannot be found), and the user let rules run unconfined."""
    perms = Permissions(
        approver,
        workspace=ws,
        allow_commands=["git", "cd"],
        sandbox=Sandbox(ws, bwrap=str(ws.parent / "no-bwrap-here")),
        sandbox_settings=SandboxSettings(rules="off"),
    )
    return ToolContext(workspace=ws, permissions=perms, command_timeout=30.0)


SETUPS = {"sandbox": sandboxed, "unconfined": unconfined}


@pytest.fixture(params=list(SETUPS))
def setup(request):
    if request.param == "sandbox" and not Sandbox(Path("/")).probe():
        pytest.skip("bubblewrap cannot sandbox on this machine")
    return SETUPS[request.param]


@pytest.mark.parametrize("attack", CONTAINED, ids=lambda f: f.__name__)
async def test_repository_config_runs_nothing(tmp_path, registry, setup, attack):
    marker = tmp_path / "pwned"
    ws, command = attack(tmp_path, marker)
    approver = FakeApprover("deny")
    result = await execute(registry, setup(ws, approver), "terminal-execute", {"command": command})
    assert approver.requests == [], approver.requests[0].reason if approver.requests else ""
    assert result.meta["permission"]["decision"] in ("read_only", "rule")
    assert MARK not in result.content and not marker.exists(), result.content[:2000]
    assert not list(tmp_path.rglob("pwned"))


@pytest.mark.parametrize("attack", ASKS, ids=lambda f: f.__name__)
async def test_repository_reaching_outside_asks(tmp_path, registry, setup, attack):
    marker = tmp_path / "pwned"
    ws, command = attack(tmp_path, marker)
    approver = FakeApprover("deny")
    result = await execute(registry, setup(ws, approver), "terminal-execute", {"command": command})
    assert len(approver.requests) == 1 and result.is_error
    request = approver.requests[0]
    assert request.reason.startswith("git may reach outside the workspace") and request.choices == ["once", "deny"]
    assert not marker.exists() and "secret outside" not in result.content


async def test_the_reported_repository_still_works_for_its_owner(tmp_path, registry):
    """Hardened read-only git still answers: log, diff and status of an ordinary repository."""
    ws = repo(tmp_path / "ws", {"f.txt": "one\n", ".gitattributes": "*.bin binary\n"})
    touch_later(ws / "f.txt")
    if not Sandbox(ws).probe():
        pytest.skip("bubblewrap cannot sandbox on this machine")
    approver = FakeApprover("deny")
    result = await execute(
        registry,
        sandboxed(ws, approver),
        "terminal-execute",
        {"command": "git status --short && git diff && git log --oneline"},
    )
    out = json.loads(result.content)
    assert approver.requests == [] and out["exitCode"] == 0, out
    assert " M f.txt" in out["stdout"] and "+two" in out["stdout"] and "first" in out["stdout"]


async def test_a_fifo_config_does_not_hang_cairn(tmp_path, registry):
    """A FIFO at .git/config hung cairn for ten minutes: git's answer is awaited with a limit."""
    ws = repo(tmp_path / "ws")
    (ws / ".git" / "config").unlink()
    os.mkfifo(ws / ".git" / "config")
    approver = FakeApprover("deny")
    perms = Permissions(approver, workspace=ws)
    result = await execute(
        registry,
        ToolContext(workspace=ws, permissions=perms, command_timeout=30.0),
        "terminal-execute",
        {"command": "git status"},
        seconds=60,
    )
    assert len(approver.requests) == 1 and result.is_error
    assert "git cannot tell where its repository is" in approver.requests[0].reason


@pytest.mark.parametrize(
    "attack",
    [a for a in CONTAINED + ASKS if a not in (gitdir_file_outside, alternates_outside, repository_above)],
    ids=lambda f: f.__name__,
)
def test_each_attack_is_real_without_cairn(tmp_path, attack):
    """The same command run as cairn ran it before (plain bash, the same pager settings): the
    repository's program runs, or a file outside is shown. The tests above are not vacuous."""
    marker = tmp_path / "pwned"
    ws, command = attack(tmp_path, marker)
    env = {**os.environ, "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "GIT_OPTIONAL_LOCKS": "0"}
    done = subprocess.run(["bash", "-c", command], cwd=ws, env=env, capture_output=True, text=True, timeout=60)
    assert MARK in done.stdout + done.stderr or "secret outside" in done.stdout, (done.stdout, done.stderr)


@pytest.mark.parametrize("make", list(SETUPS))
async def test_a_linked_worktree_of_the_workspace_runs_read_only_git_unasked(request, registry, make):
    """`cairn -w NAME` (or `git worktree add`): the worktree's git folders live in the main
    checkout's .git, outside the workspace, and point back at it; its `git status` reads as in
    any checkout, without a question each time."""
    # Not under /tmp: the sandbox's /tmp is its own, and the main checkout must be visible
    # (read-only) to git in the sandbox, as a user's project folder is.
    base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="cairn-worktree-"))
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    main = repo(base / "main")
    ws = base / "tree"
    git("worktree", "add", "-q", "-b", "cairn/tree", str(ws), cwd=main)
    if make == "sandbox" and not Sandbox(ws).probe():
        pytest.skip("bubblewrap cannot sandbox on this machine")
    approver = FakeApprover("deny")
    result = await execute(
        registry, SETUPS[make](ws, approver), "terminal-execute", {"command": "git status --short -b"}
    )
    assert approver.requests == [], approver.requests[0].reason
    assert "cairn/tree" in json.loads(result.content)["stdout"]
