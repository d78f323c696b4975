"""What a writable sandbox keeps read-only (agent/tools/sandbox_protect.py), with real git.

tests/hostile/test_sandbox_writes.py proves with the real bwrap that the attacks fail; this
file pins which paths are protected for which layout, the order of the binds, and that git
is asked once and again only when its configuration changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.tools import sandbox_protect
from agent.tools.sandbox import Sandbox
from agent.tools.sandbox_protect import (
    Protection,
    bind_args,
    parse_config_listing,
    protected_paths,
    top_entry,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")


def git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    env.update(
        {
            f"GIT_{who}_{what}": value
            for who in ("AUTHOR", "COMMITTER")
            for what, value in (("NAME", "t"), ("EMAIL", "t@t"))
        }
    )
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def ws(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))  # no global git config of the machine's
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    folder = tmp_path / "ws"
    folder.mkdir()
    return Path(os.path.realpath(folder))


def rel(ws: Path, paths: list[str]) -> list[str]:
    return [os.path.relpath(p, ws) for p in paths]


def test_without_a_repository_cairns_configuration_is_protected(ws):
    for name in (".cairn", ".claude"):
        (ws / name).mkdir()
    (ws / ".mcp.json").write_text("{}")
    (ws / "src").mkdir()
    assert rel(ws, Protection(ws).paths()) == [".cairn", ".claude", ".mcp.json"]


@needs_git
def test_a_repository_its_hooks_path_and_included_config(ws):
    git("init", "-q", cwd=ws)
    (ws / ".husky" / "_").mkdir(parents=True)
    (ws / "shared.gitconfig").write_text("[user]\n\tname = x\n")
    git("config", "core.hooksPath", ".husky/_", cwd=ws)
    git("config", "include.path", "../shared.gitconfig", cwd=ws)
    git("config", "includeIf.gitdir:/nowhere/.path", "../cond.gitconfig", cwd=ws)  # missing: nothing to bind
    assert rel(ws, Protection(ws).paths()) == [".git", ".husky", "shared.gitconfig"]


@needs_git
def test_a_gitdir_pointer_its_target_and_linked_worktrees_inside(ws):
    git("init", "-q", cwd=ws)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=ws)
    (ws / "store").mkdir()
    (ws / ".git").rename(ws / "store" / "main.git")
    (ws / ".git").write_text("gitdir: store/main.git\n")
    git("worktree", "add", "-q", str(ws / "trees" / "topic"), cwd=ws)
    paths = Protection(ws).paths()
    assert rel(ws, paths) == [".git", "store/main.git", "trees/topic/.git"]
    args = bind_args(str(ws), paths)
    # Parents first, made mount points (writable) so they cannot be renamed; then read-only.
    assert args == [
        "--ro-bind",
        f"{ws}/.git",
        f"{ws}/.git",
        "--bind",
        f"{ws}/store",
        f"{ws}/store",
        "--ro-bind",
        f"{ws}/store/main.git",
        f"{ws}/store/main.git",
        "--bind",
        f"{ws}/trees",
        f"{ws}/trees",
        "--bind",
        f"{ws}/trees/topic",
        f"{ws}/trees/topic",
        "--ro-bind",
        f"{ws}/trees/topic/.git",
        f"{ws}/trees/topic/.git",
    ]


@needs_git
def test_nested_repositories_directly_below_and_submodules_deeper(ws, tmp_path):
    git("init", "-q", cwd=ws)
    git("init", "-q", "clone", cwd=ws)
    (ws / "deep" / "er").mkdir(parents=True)
    git("init", "-q", cwd=ws / "deep" / "er")  # two levels down, no submodule: not looked for
    (ws / ".gitmodules").write_text('[submodule "x"]\n\tpath = libs/x\n\turl = ./x\n')
    (ws / "libs" / "x").mkdir(parents=True)
    (ws / "libs" / "x" / ".git").write_text("gitdir: ../../.git/modules/x\n")
    assert rel(ws, Protection(ws).paths()) == [".git", "clone/.git", "libs/x/.git"]


def test_extra_paths_only_inside_existing_and_no_symlinks(ws, tmp_path):
    (ws / "tools").mkdir()
    (ws / "tools" / "server.py").write_text("")
    (ws / "tools" / "link.py").symlink_to(ws / "tools" / "server.py")
    (tmp_path / "outside.py").write_text("")
    box = Protection(
        ws, [ws / "tools" / "server.py", ws / "tools" / "link.py", ws / "missing.py", tmp_path / "outside.py"]
    )
    assert rel(ws, box.paths()) == ["tools/server.py"]


def test_an_inner_path_is_covered_by_the_outer_one(ws):
    for folder in ("a/b", "a-b"):
        (ws / folder).mkdir(parents=True)
    candidates = [str(ws / "a" / "b"), str(ws / "a"), str(ws / "a-b"), str(ws)]
    assert protected_paths(str(ws), candidates) == [str(ws)]
    assert protected_paths(str(ws), candidates[:3]) == [str(ws / "a"), str(ws / "a-b")]


def test_top_entry_and_the_hooks_path_at_the_workspace_itself(ws):
    assert top_entry(str(ws / ".husky" / "_"), str(ws)) == str(ws / ".husky")
    assert top_entry(str(ws / "hooks"), str(ws)) == str(ws / "hooks")
    assert top_entry(str(ws), str(ws)) == str(ws)


def test_the_config_listing_is_read_as_git_writes_it(ws):
    listing = (
        b"file:.git/config\0core.hookspath\n.husky/_\0"
        b"file:.git/config\0include.path\n../shared.gitconfig\0"
        b"file:/etc/x\0includeif.gitdir:~/w/.path\n~/more.gitconfig\0"
        b"file:.git/config\0core.bare\nfalse\0"
        b"command line:\0core.hookspath\n/dev/null\0"
        b"file:.git/config\0user.empty\0"
    )
    files, includes, hooks = parse_config_listing(listing, str(ws))
    assert files == [str(ws / ".git" / "config"), "/etc/x"]
    assert includes == [str(ws / "shared.gitconfig"), os.path.expanduser("~/more.gitconfig")]
    assert hooks == [str(ws / ".husky" / "_")]


@needs_git
def test_git_is_asked_once_and_again_when_its_config_changes(ws, monkeypatch):
    git("init", "-q", cwd=ws)
    calls: list[list[str]] = []
    real = sandbox_protect.git_guard.run_git

    def counting(args, *rest, **kw):
        calls.append(list(args))
        return real(args, *rest, **kw)

    monkeypatch.setattr(sandbox_protect.git_guard, "run_git", counting)
    box = Protection(ws)
    assert rel(ws, box.paths()) == [".git"]
    (ws / "src.py").write_text("x = 1\n")  # an ordinary write: git is not asked again
    assert rel(ws, box.paths()) == [".git"]
    assert len(calls) == 1
    (ws / ".husky" / "_").mkdir(parents=True)
    git("config", "core.hooksPath", ".husky/_", cwd=ws)  # a husky install mid-session
    assert rel(ws, box.paths()) == [".git", ".husky"]
    assert len(calls) == 2


@needs_git
def test_a_hooks_path_of_the_workspace_itself_makes_it_read_only(ws):
    git("init", "-q", cwd=ws)
    git("config", "core.hooksPath", ".", cwd=ws)
    box = Sandbox(ws, bwrap="/x/bwrap")
    argv = box.argv(["make"], "workspace-write", ws)
    at = argv.index("--bind")
    assert argv[at : at + 6] == ["--bind", str(ws), str(ws), "--ro-bind", str(ws), str(ws)]


def test_settings_hand_on_protect_and_env_passthrough(tmp_path):
    (tmp_path / "run.sh").write_text("")
    settings = SimpleNamespace(workspace=tmp_path, sandbox=SimpleNamespace(hide=[], env_passthrough=["MY_TOKEN"]))
    box = Sandbox.for_settings(settings, protect=[tmp_path / "run.sh"])
    assert box.env_passthrough == ["MY_TOKEN"]
    assert box.protection.paths() == [str(Path(os.path.realpath(tmp_path)) / "run.sh")]
