"""`cairn --worktree NAME` / `-w NAME` and `cairn worktree list|remove` (SPEC §11, issue 47 item 4),
with real git repositories, the installed console script and the fake model server.

The repository is untrusted: a post-checkout hook, an fsmonitor and a smudge filter that would
each leave a marker must leave none when cairn makes the worktree.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from agent.cli import main
from agent.session.schema import MIGRATIONS
from agent.session.store import Store
from agent.session.worktrees import WorktreeError, open_worktree, remove_worktree, valid_name
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, needs_cairn


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch):
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.com")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("old\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")
    return root


def worktrees_home() -> Path:
    return Path(os.environ["CAIRN_HOME"]) / "worktrees"


@pytest.mark.parametrize("name", ["feat", "fix-12", "v1.2_b", "A"])
def test_a_branch_component_is_a_name(name):
    assert valid_name(name) == name


@pytest.mark.parametrize(
    "name", ["../x", "-rf", "a/b", "a b", "a\x1bb", "", ".hidden", "a..b", "x.lock", "x.", "é", "a" * 65]
)
def test_other_names_are_refused(name):
    with pytest.raises(WorktreeError, match="is not a worktree name"):
        valid_name(name)


@pytest.mark.parametrize("flag", ["--worktree=../x", "--worktree=-rf", "-w=a/b"])
def test_the_command_line_refuses_a_bad_name_before_git_runs(repo, flag, capsys):
    assert main([flag, "--cwd", str(repo), "-p", "hi"], warm=False) == 2
    assert "is not a worktree name" in capsys.readouterr().err
    assert not worktrees_home().exists()
    assert git(repo, "branch", "--list", "cairn/*") == ""


def test_outside_a_repository_it_is_a_usage_error(tmp_path, capsys):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["-w", "feat", "--cwd", str(plain), "-p", "hi"], warm=False) == 2
    assert "needs a git repository" in capsys.readouterr().err


def test_worktree_is_not_an_option_of_a_command(repo, capsys):
    assert main(["-w", "feat", "session", "list"], warm=False) == 2
    assert "applies to a session" in capsys.readouterr().err


def test_the_repository_runs_none_of_its_programs(repo, tmp_path):
    """A post-checkout hook, an fsmonitor and a smudge filter, each writing a marker: plain git
    runs them (the control), cairn's worktree add runs none."""
    marker = tmp_path / "marker"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\necho hook >> '{marker}'\n")
    hook.chmod(0o755)
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\necho fsmonitor >> '{marker}'\n")
    monitor.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(monitor))
    git(repo, "config", "filter.evil.smudge", f"sh -c 'echo smudge >> {marker}; cat'")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "--no-verify", "-m", "attributes")
    marker.unlink(missing_ok=True)  # the commit's own status may have asked the fsmonitor

    git(repo, "worktree", "add", "-q", "-b", "control", str(tmp_path / "control"))  # the control
    assert {"hook", "smudge"} <= set(marker.read_text().split())
    marker.unlink()

    opened = open_worktree(repo, "feat")
    assert opened.made and (Path(opened.worktree.path) / "a.txt").read_text() == "old\n"
    assert not marker.exists()


@needs_cairn
def test_a_session_on_a_worktree_edits_it_and_is_listed_then_removed(repo):
    edit = ("c1", "filesystem-edit", {"filePath": "a.txt", "searchContent": "old", "replaceContent": "new"})
    with FakeLLMServer([tool_calls([edit]), text("Changed a.txt."), text("Still here.")]) as srv:
        first = cairn("-w", "feat", *base_args(srv, repo), "--yolo", "-p", "change a.txt")
        assert first.returncode == 0, first.stderr
        assert first.stdout == "Changed a.txt.\n"
        homes = list(worktrees_home().glob("project-*/feat"))
        assert len(homes) == 1
        tree = homes[0]
        assert (tree / "a.txt").read_text() == "new\n"  # the worktree's file changed ...
        assert (repo / "a.txt").read_text() == "old\n"  # ... the main checkout's did not
        assert git(tree, "branch", "--show-current").strip() == "cairn/feat"
        assert "made worktree feat (branch cairn/feat)" in first.stderr

        second = cairn("--worktree", "feat", *base_args(srv, repo), "--continue", "-p", "again")
        assert second.returncode == 0, second.stderr
        assert "reusing worktree feat" in second.stderr
        assert (tree / "a.txt").read_text() == "new\n"  # the same checkout, its change kept
        last = srv.requests[-1]["messages"]
        assert str(tree) in last[0]["content"]  # the model was told where it works
        assert [m["content"] for m in last if m["role"] == "user"] == ["change a.txt", "again"]  # --continue there

    listed = cairn("session", "list")
    assert listed.returncode == 0, listed.stderr
    on_tree = [line for line in listed.stdout.splitlines() if "(worktree feat)" in line]
    assert len(on_tree) == 1 and f"[{tree}]" in on_tree[0]
    rows = json.loads(cairn("session", "list", "--json").stdout)
    assert [r["worktree"]["branch"] for r in rows] == ["cairn/feat"]
    assert rows[0]["worktree"]["repo"] == str(repo.resolve())

    wt_list = cairn("worktree", "list")
    assert wt_list.returncode == 0 and f"feat  cairn/feat  {tree}  [{repo.resolve()}]" in wt_list.stdout
    listed_json = json.loads(cairn("worktree", "list", "--json").stdout)
    assert [(w["name"], w["branch"], w["path"], w["exists"]) for w in listed_json] == [
        ("feat", "cairn/feat", str(tree), True)
    ]

    refused = cairn("--cwd", str(repo), "worktree", "remove", "feat")
    assert refused.returncode == 2 and "uncommitted changes" in refused.stderr
    assert (tree / "a.txt").read_text() == "new\n"

    forced = cairn("--cwd", str(repo), "worktree", "remove", "feat", "--force")
    assert forced.returncode == 0, forced.stderr
    assert not tree.exists()
    assert git(repo, "branch", "--list", "cairn/feat") == ""
    assert "feat" not in cairn("worktree", "list").stdout
    assert "(worktree feat, removed)" in cairn("session", "list").stdout


def test_removing_an_unknown_worktree_is_a_usage_error(repo, capsys):
    assert main(["--cwd", str(repo), "worktree", "remove", "nope"], warm=False) == 2
    assert "no worktree named nope" in capsys.readouterr().err


def test_remove_keeps_an_unmerged_branch_unless_forced(repo):
    opened = open_worktree(repo, "work")
    tree = Path(opened.worktree.path)
    (tree / "b.txt").write_text("b\n")
    git(tree, "add", "b.txt")
    git(tree, "commit", "-q", "-m", "unmerged")
    said = remove_worktree(opened.worktree, force=False)
    assert "kept" in said and not tree.exists()
    assert git(repo, "branch", "--list", "cairn/work").strip() == "cairn/work"

    again = open_worktree(repo, "work")  # the branch left behind is checked out again, commits and all
    assert again.made and (Path(again.worktree.path) / "b.txt").read_text() == "b\n"
    assert "deleted" in remove_worktree(again.worktree, force=True)
    assert git(repo, "branch", "--list", "cairn/work") == ""


def test_a_merged_branch_goes_with_its_worktree(repo):
    opened = open_worktree(repo, "tidy")
    assert remove_worktree(opened.worktree, force=False) == "branch cairn/tidy deleted"


def test_a_subfolder_maps_to_the_same_subfolder_of_the_worktree(repo):
    (repo / "src").mkdir()
    (repo / "src" / "m.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "src")
    opened = open_worktree(repo / "src", "sub")
    assert opened.workspace == Path(opened.worktree.path) / "src"
    assert opened.worktree.repo == str(repo.resolve())


def test_a_folder_in_the_way_is_not_taken_over(repo):
    opened = open_worktree(repo, "taken")
    remove_worktree(opened.worktree, force=True)
    Path(opened.worktree.path).mkdir(parents=True)
    (Path(opened.worktree.path) / "mine.txt").write_text("keep\n")
    with pytest.raises(WorktreeError, match="is not a worktree"):
        open_worktree(repo, "taken")
    assert (Path(opened.worktree.path) / "mine.txt").read_text() == "keep\n"


async def test_an_older_database_opens_and_gains_the_worktrees_table(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    ours = next(i for i, script in enumerate(MIGRATIONS) if "CREATE TABLE worktrees" in script)
    for version, script in enumerate(MIGRATIONS[:ours], start=1):
        conn.executescript(script)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    conn.execute("INSERT INTO sessions (id, cwd, created_at, updated_at) VALUES ('s', '/a', 0, 0)")
    conn.commit()
    conn.close()
    store = await Store.open(path)
    try:
        assert await store.schema_version() == len(MIGRATIONS)
        assert await store.worktrees() == []
        assert (await store.get_session("s")) is not None
    finally:
        await store.close()
