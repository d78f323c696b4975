"""The git cairn runs on its own (the automatic condense's environment details) runs nothing
of the repository's, in any permission mode and with no cairn config in the repository.

Issue 43: auto-condense ran a plain `git status` in the workspace, so a repository shipped with
its `.git` (a tarball of a checkout) that sets `core.fsmonitor` ran its program as the user
once the model had read enough to trigger a condense. Every attack of
tests/hostile/test_repository_code.py is tried here against the condense's git, through the
real condense with the fake model server; those whose repository reaches outside the
workspace get no git facts at all.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agent.context.condense import environment_details
from tests.context.test_condense import run, session_history
from tests.hostile.test_repository_code import ASKS, CONTAINED, MARK, evil, git, repo, touch_later

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")
NOW = 1_700_000_000_000


def fsmonitor_program(root: Path, marker: Path) -> Path:
    """The reported one: a repository whose own .git/config names an fsmonitor program."""
    ws = repo(root / "ws")
    program = root / "fsmonitor.sh"
    program.write_text(f"#!/bin/sh\n{evil(marker)}\n")
    program.chmod(0o755)
    git("config", "core.fsmonitor", str(program), cwd=ws)
    touch_later(ws / "f.txt")
    return ws


def hooks_path_in_workspace(root: Path, marker: Path) -> Path:
    """husky's layout: `core.hooksPath = .husky/_`, a hook git runs when it refreshes the index."""
    ws = repo(root / "ws")
    hooks = ws / ".husky" / "_"
    hooks.mkdir(parents=True)
    (hooks / "post-index-change").write_text(f"#!/bin/sh\n{evil(marker)}\n")
    (hooks / "post-index-change").chmod(0o755)
    git("config", "core.hooksPath", ".husky/_", cwd=ws)
    os.utime(ws / "f.txt", (1, 1))
    return ws


def clean_filter_on_refresh(root: Path, marker: Path) -> Path:
    """Same content, other stat data: `git status` re-hashes the file through its clean filter."""
    ws = repo(root / "ws", {"f.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
    git("config", "filter.evil.clean", evil(marker) + " cat", cwd=ws)
    os.utime(ws / "f.txt", (1, 1))
    return ws


def _workspace_of(attack):
    """An attack of test_repository_code builds (workspace, command): the workspace is what counts here."""
    return lambda root, marker: attack(root, marker)[0]


ATTACKS = {
    "fsmonitor_program": fsmonitor_program,
    "hooks_path_in_workspace": hooks_path_in_workspace,
    "clean_filter_on_refresh": clean_filter_on_refresh,
    **{a.__name__: _workspace_of(a) for a in CONTAINED},
}


@pytest.mark.parametrize("attack", list(ATTACKS.values()), ids=list(ATTACKS))
async def test_the_condense_git_runs_nothing_of_the_repository(tmp_path, attack):
    marker = tmp_path / "pwned"
    ws = attack(tmp_path, marker)
    details = await environment_details(ws, NOW)
    assert MARK not in details and not marker.exists(), details
    assert not list(tmp_path.rglob("pwned"))
    if (ws / ".git").is_dir():  # an ordinary work tree still gets its facts
        assert "Git branch: main" in details and "Git status:" in details, details


@pytest.mark.parametrize("attack", ASKS, ids=lambda f: f.__name__)
async def test_a_repository_reaching_outside_gives_no_git_facts(tmp_path, attack):
    marker = tmp_path / "pwned"
    ws, _ = attack(tmp_path, marker)
    details = await environment_details(ws, NOW)
    assert "Git branch" not in details and "Git status" not in details, details
    assert f"Folder: {ws}" in details
    assert not marker.exists() and "secret outside" not in details


async def test_an_automatic_condense_in_an_fsmonitor_repository(server, tmp_path):
    """The whole path the model triggers: the real condense, automatic, against the fake server."""
    marker = tmp_path / "pwned"
    ws = fsmonitor_program(tmp_path, marker)
    (ws / "new.txt").write_text("x\n")
    result = await run(server, session_history(), ws, automatic=True)
    assert not marker.exists()
    assert "Git branch: main" in result.summary.content and "?? new.txt" in result.summary.content
    assert " M f.txt" in result.summary.content
