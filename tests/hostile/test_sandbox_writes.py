"""A command a rule allows (the sandbox's writable mode) cannot plant what runs later, outside.

Issue 43: only `.git/hooks`, `.git/config`, `.git/info` and `.git/config.worktree` were
read-only, so a test script could `mv .git .git-orig` and build a new `.git` with an fsmonitor,
write `.git/commondir` to point at a copy with its own config, or, in an ordinary husky
checkout (`core.hooksPath=.husky/_`), write a hook into `.husky/_/`. The next git cairn ran
itself, and the user's next commit, ran that code unconfined.

Each attack runs as the model would run it: `sh attack.sh` through the registry, allowed by a
rule, so in the writable sandbox (real bwrap). Then, outside any sandbox: cairn's own git
facts (the condense's), and the user's own plain `git status` and `git commit`. What the
attack planted prints the mark and touches a file outside the workspace: neither may appear.
A source file the script writes is written (the writable mode still works).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agent.context.condense import environment_details
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.sandbox import Sandbox
from tests.hostile.conftest import execute
from tests.hostile.test_repository_code import GIT_ENV, MARK, evil, git, repo
from tests.tools.test_program_roots import venv

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is needed"),
    pytest.mark.skipif(not Sandbox(Path("/")).probe(), reason="bubblewrap cannot sandbox on this machine"),
]
NOW = 1_700_000_000_000


def planted_config(marker: Path) -> str:
    """A git config whose every program-running key prints the mark and touches `marker`."""
    program = evil(marker)
    return f'[core]\n\tfsmonitor = "{program}"\n\thooksPath = hooks-planted\n[include]\n'


def planted_hook(marker: Path) -> str:
    return f"#!/bin/sh\n{evil(marker)}\n"


# -- the attacks: (set the workspace up, the script the rule-allowed command runs) ---------------
# Each returns the workspace; `marker` is what planted code would touch.


def rename_git_folder(root: Path, marker: Path) -> tuple[Path, str]:
    """`mv .git .git-orig`, then a new `.git` of the attacker's, with an fsmonitor and hooks."""
    ws = repo(root / "ws")
    return ws, (
        "mv .git .git-orig || echo 'mv refused'\n"
        "rm -rf .git || echo 'rm refused'\n"
        f"mkdir -p .git/hooks && cp -r .git-orig/. .git/ 2>/dev/null\n"
        f"printf '%s' '{planted_config(marker)}' > .git/config || echo 'config refused'\n"
        f"printf '%s' '{planted_hook(marker)}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit\n"
    )


def write_commondir(root: Path, marker: Path) -> tuple[Path, str]:
    """`.git/commondir` pointing at a copy (inside the workspace) with its own config."""
    ws = repo(root / "ws")
    return ws, (
        "cp -r .git copy && "
        f"printf '%s' '{planted_config(marker)}' > copy/config\n"
        "echo ../copy > .git/commondir || echo 'commondir refused'\n"
    )


def husky_hooks(root: Path, marker: Path) -> tuple[Path, str]:
    """An ordinary husky checkout: `core.hooksPath=.husky/_`, whose hooks run `.husky/pre-commit`."""
    ws = repo(root / "ws")
    (ws / ".husky" / "_").mkdir(parents=True)
    (ws / ".husky" / "_" / "pre-commit").write_text('#!/bin/sh\n. "$(dirname "$0")/../pre-commit"\n')
    (ws / ".husky" / "pre-commit").write_text("true\n")
    for hook in (ws / ".husky" / "_" / "pre-commit", ws / ".husky" / "pre-commit"):
        hook.chmod(0o755)
    git("add", "-A", cwd=ws)
    git("commit", "-qm", "husky", cwd=ws)
    git("config", "core.hooksPath", ".husky/_", cwd=ws)
    return ws, (
        f"printf '%s' '{planted_hook(marker)}' > .husky/_/pre-commit || echo 'hook refused'\n"
        f"printf '%s' '{evil(marker)}' > .husky/pre-commit || echo 'husky script refused'\n"
        "mv .husky .husky-orig || echo 'mv refused'\n"
        f"mkdir -p .husky/_ && printf '%s' '{planted_hook(marker)}' > .husky/_/pre-commit "
        "&& chmod +x .husky/_/pre-commit\n"
    )


def gitdir_pointer(root: Path) -> Path:
    """`.git` is a `gitdir:` file naming a folder deeper in the workspace."""
    ws = repo(root / "ws")
    (ws / "vendor").mkdir()
    (ws / ".git").rename(ws / "vendor" / "main.git")
    (ws / ".git").write_text("gitdir: vendor/main.git\n")
    return ws


def rename_gitdir_parent(root: Path, marker: Path) -> tuple[Path, str]:
    """Rename the pointed-to folder's parent, put a planted git folder where it was."""
    return gitdir_pointer(root), (
        "mv vendor vendor-orig && mkdir vendor && cp -r vendor-orig/main.git vendor/ && "
        f"printf '%s' '{planted_config(marker)}' > vendor/main.git/config\n"
    )


def rewrite_gitdir_pointer(root: Path, marker: Path) -> tuple[Path, str]:
    """Point `.git` at a planted copy."""
    return gitdir_pointer(root), (
        f"cp -r vendor/main.git planted.git && printf '%s' '{planted_config(marker)}' > planted.git/config && "
        "echo 'gitdir: planted.git' > .git\n"
    )


def included_config(root: Path, marker: Path) -> tuple[Path, str]:
    """The repository's config includes a committed file: the file is config too."""
    ws = repo(root / "ws", {"f.txt": "one\n", "shared.gitconfig": "[user]\n\tname = shared\n"})
    git("config", "include.path", "../shared.gitconfig", cwd=ws)
    return ws, f"printf '%s' '{planted_config(marker)}' >> shared.gitconfig\n"


def nested_repository(root: Path, marker: Path) -> tuple[Path, str]:
    """A clone inside the workspace (`sub/.git`): its config."""
    ws = repo(root / "ws")
    repo(ws / "sub")
    return ws, f"printf '%s' '{planted_config(marker)}' > sub/.git/config\n"


def rename_nested_repository(root: Path, marker: Path) -> tuple[Path, str]:
    """The clone's folder renamed, a copy with a planted config put in its place."""
    ws = repo(root / "ws")
    repo(ws / "sub")
    return ws, (f"mv sub sub-orig && cp -r sub-orig sub && printf '%s' '{planted_config(marker)}' > sub/.git/config\n")


def submodule(root: Path) -> Path:
    """A submodule deeper down: `libs/inner/.git` is a `gitdir:` file into `.git/modules/`."""
    inner = repo(root / "inner")
    ws = repo(root / "ws")
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "libs/inner", cwd=ws)
    git("commit", "-qm", "sub", cwd=ws)
    return ws


PLANT_MODULE = "cp -r .git/modules/libs/inner planted && printf '%s' '{config}' > planted/config && "


def rewrite_submodule_pointer(root: Path, marker: Path) -> tuple[Path, str]:
    return submodule(root), (
        PLANT_MODULE.format(config=planted_config(marker)) + "echo 'gitdir: ../../planted' > libs/inner/.git\n"
    )


def rename_submodule_parent(root: Path, marker: Path) -> tuple[Path, str]:
    return submodule(root), (
        PLANT_MODULE.format(config=planted_config(marker))
        + "mv libs libs-orig && mkdir -p libs/inner && cp -r libs-orig/inner/. libs/inner/ && "
        "echo 'gitdir: ../../planted' > libs/inner/.git\n"
    )


def installed_hook(ws: Path, text: str) -> None:
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(text)
    hook.chmod(0o755)


def hook_runs_a_script(root: Path, marker: Path) -> tuple[Path, str]:
    """An installed hook runs a committed script of the work tree (`sh scripts/check.sh`)."""
    ws = repo(root / "ws", {"f.txt": "one\n", "scripts/check.sh": "true\n"})
    installed_hook(ws, "#!/bin/sh\nsh scripts/check.sh\n")
    return ws, f"printf '%s\\n' '{evil(marker)}' > scripts/check.sh || echo 'script refused'\n"


def hook_manager_config(root: Path, marker: Path) -> tuple[Path, str]:
    """A hook manager's hook (pre-commit's) takes its commands from a work-tree config whose
    name it builds at run time: the manager's name is what gives it away."""
    config = "repos:\n- repo: local\n  hooks:\n  - id: t\n    entry: true\n"
    ws = repo(root / "ws", {"f.txt": "one\n", ".pre-commit-config.yaml": config})
    installed_hook(
        ws,
        "#!/bin/sh\n# File generated by pre-commit: https://pre-commit.com\ncfg=.pre-commit-config\n"
        'sh -c "$(sed -n \'s/^ *entry: //p\' "$cfg.yaml")"\n',
    )
    planted = config.replace("entry: true", f"entry: {evil(marker)}")
    return ws, f"printf '%s' '{planted}' > .pre-commit-config.yaml || echo 'config refused'\n"


ATTACKS: list[Callable[[Path, Path], tuple[Path, str]]] = [
    hook_runs_a_script,
    hook_manager_config,
    rename_git_folder,
    write_commondir,
    husky_hooks,
    rename_gitdir_parent,
    rewrite_gitdir_pointer,
    included_config,
    nested_repository,
    rename_nested_repository,
    rewrite_submodule_pointer,
    rename_submodule_parent,
]


def rule_context(ws: Path, protect: list[Path] = ()) -> ToolContext:
    """`sh` allowed by a rule: it runs unasked in the writable sandbox."""
    sandbox = Sandbox.for_folder(ws, protect=protect)
    perms = Permissions(None, workspace=ws, allow_commands=["sh"], sandbox=sandbox)
    return ToolContext(workspace=ws, permissions=perms, command_timeout=30.0)


def users_git(ws: Path, *args: str) -> str:
    """The user's own git, later, outside any sandbox: plain, nothing turned off."""
    env = {**os.environ, **GIT_ENV, "HOME": str(ws.parent)}
    done = subprocess.run(["git", *args], cwd=ws, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


async def run_attack(registry, ws: Path, script: str, protect: list[Path] = ()) -> dict:
    (ws / "src").mkdir(exist_ok=True)
    (ws / "attack.sh").write_text(script + "echo changed > src/app.py\n")
    result = await execute(registry, rule_context(ws, protect), "terminal-execute", {"command": "sh attack.sh"})
    assert result.meta["sandbox"] == "workspace-write" and result.meta["permission"]["decision"] == "rule"
    assert (ws / "src" / "app.py").read_text() == "changed\n"  # the writable mode still writes sources
    return json.loads(result.content)


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda f: f.__name__)
async def test_a_rule_allowed_command_plants_nothing_that_runs_later(tmp_path, registry, attack):
    marker = tmp_path / "pwned"
    ws, script = attack(tmp_path, marker)
    await run_attack(registry, ws, script)
    details = await environment_details(ws, NOW)  # cairn's own git, as the condense runs it
    said = users_git(ws, "status") + users_git(ws, "commit", "-qam", "after") + users_git(ws, "log", "-1")
    for inner in (ws / "sub", ws / "libs" / "inner"):  # the user works in the nested repository too
        if inner.is_dir():
            said += users_git(inner, "status") + users_git(inner, "commit", "-qam", "after")
    assert MARK not in details and MARK not in said, (details, said)
    assert not marker.exists(), said


async def test_the_protected_folders_cannot_be_written_or_renamed(tmp_path, registry):
    ws, _ = husky_hooks(tmp_path, tmp_path / "pwned")
    for name, text in ((".claude/settings.json", "{}"), (".cairn/config.toml", "")):
        (ws / name).parent.mkdir(exist_ok=True)
        (ws / name).write_text(text)
    (ws / ".mcp.json").write_text("{}")
    (ws / "tools").mkdir()
    (ws / "tools" / "mcp_server.py").write_text("print('server')\n")
    out = await run_attack(
        registry,
        ws,
        "for f in .claude/settings.json .cairn/config.toml .mcp.json tools/mcp_server.py "
        '.git/commondir .git/config .husky/pre-commit; do echo planted > $f || echo "refused $f"; done\n'
        'for d in .git .claude .cairn .husky tools; do mv $d $d-moved || echo "kept $d"; done\n',
        protect=[ws / "tools" / "mcp_server.py"],
    )
    for name in (".claude/settings.json", ".cairn/config.toml", ".mcp.json", "tools/mcp_server.py", ".git/config"):
        assert f"refused {name}" in out["stdout"], out
        assert (ws / name).read_text() != "planted\n"
    assert "refused .git/commondir" in out["stdout"] and not (ws / ".git" / "commondir").exists()
    for folder in (".git", ".claude", ".cairn", ".husky", "tools"):
        assert f"kept {folder}" in out["stdout"] and (ws / folder).is_dir(), out
    assert "Device or resource busy" in out["stderr"]


async def test_a_repository_created_where_there_was_none_is_named(tmp_path, registry):
    """What does not exist cannot be bound read-only: a `.git` a sandboxed command creates in a
    workspace (or a folder directly in it) that had none is named in the result instead, for
    the model and the user, since git would run what its config names later."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "plant.sh").write_text("mkdir -p .git/hooks sub/.git && echo planted > .git/config\n")
    (ws / "write.sh").write_text("echo x > f.txt\n")
    result = await execute(registry, rule_context(ws), "terminal-execute", {"command": "sh plant.sh"})
    stderr = json.loads(result.content)["stderr"]
    assert result.meta["sandbox"] == "workspace-write"
    assert "[cairn] This command created .git, sub/.git in the workspace" in stderr, stderr
    again = await execute(registry, rule_context(ws), "terminal-execute", {"command": "sh write.sh"})
    assert "created" not in json.loads(again.content)["stderr"]  # an existing one is protected, not named again


async def test_a_rule_allowed_command_cannot_plant_a_pth_in_a_trusted_servers_venv(tmp_path, registry):
    ws = tmp_path / "ws"
    env = venv(ws / ".venv")
    site = env / "lib" / "python3.11" / "site-packages"
    (ws / "plant.sh").write_text(f"echo 'import os' > {site}/evil.pth || echo refused\necho ok > src.txt\n")
    ctx = rule_context(ws, protect=[env / "bin" / "python"])
    result = await execute(registry, ctx, "terminal-execute", {"command": "sh plant.sh"})
    out = json.loads(result.content)
    assert "refused" in out["stdout"] and not (site / "evil.pth").exists(), out
    assert (ws / "src.txt").read_text() == "ok\n"
