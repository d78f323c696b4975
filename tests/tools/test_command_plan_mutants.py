"""The command plan the approval decides on (agent/tools/command_plan.py), pinned where mutation
testing found it unwatched (issue 36, scripts/mutation.sh).

The plan says which parts only read, which folders they run in and which words make the
command ask; a wrong answer either runs a command unasked that touches a protected or outside
file, or asks for what needs no question. Each case states the whole plan.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.tools.command_plan import (
    MAX_CHECKED_PARTS,
    MAX_CHECKED_PATHS,
    CommandPlan,
    _path_reason,
    analyse_command,
    protected_reason,
)
from agent.tools.command_scope import command_scope, prefix_matches


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("a\n")
    return Path(os.path.realpath(workspace))


def test_a_read_only_command_runs_in_the_workspace(ws):
    plan = analyse_command("cat a.txt", workspace=ws)
    assert plan == CommandPlan(parts=[["cat", "a.txt"]], read_only=[True], cwds=[str(ws)])


def test_the_working_directory_is_taken_in_the_workspace(ws):
    plan = analyse_command("cat a.txt", workspace=ws, cwd="sub")
    assert plan.cwds == [str(ws / "sub")] and plan.read_only == [True]
    assert analyse_command("cat ../a.txt", workspace=ws, cwd="sub").read_only == [True]
    assert (
        analyse_command("cat ../../x", workspace=ws, cwd="sub").unsafe
        == "it names ../../x (it is outside the workspace)"
    )


def test_without_a_workspace_nothing_is_read_only_and_only_names_are_checked():
    plan = analyse_command("cat a.txt && ls")
    assert plan == CommandPlan(parts=[["cat", "a.txt"], ["ls"]], read_only=[False, False], cwds=[])
    assert analyse_command("cat ../outside").unsafe == ""
    assert analyse_command("cat x/.env").unsafe == "it names x/.env (.env files usually hold secrets)"


def test_cd_adds_the_folder_later_parts_may_run_in(ws, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (ws / "link").symlink_to(ws / "sub")
    plan = analyse_command("cd link && cat a.txt", workspace=ws)
    # as written and with symlinks followed; the workspace too, in case cd fails
    assert plan.cwds == [str(ws), str(ws / "link"), str(ws / "sub")]
    assert plan.read_only == [True, True]
    # a path is checked from every folder the part may run in: harmless from the workspace,
    # the project's config from .cairn
    (ws / ".cairn").mkdir()
    plan = analyse_command("cd .cairn && cat config.toml", workspace=ws)
    assert plan.unsafe == "it names config.toml (the project's cairn config holds these permissions)"


def test_cd_follows_cdpath_only_for_plain_names(monkeypatch, ws):
    monkeypatch.setenv("CDPATH", "/")
    assert analyse_command("cd sub && ls", workspace=ws).unsafe == "cd may follow CDPATH to a folder cairn cannot tell"
    for folder in ("./sub", "../ws", str(ws / "sub")):
        assert analyse_command(f"cd {folder} && ls", workspace=ws).unsafe == "", folder
    monkeypatch.setenv("CDPATH", "")
    assert analyse_command("cd sub && ls", workspace=ws).unsafe == ""


def test_the_part_limit_is_inclusive(ws):
    assert analyse_command(";".join(["pwd"] * MAX_CHECKED_PARTS), workspace=ws).unsafe == ""
    plan = analyse_command(";".join(["pwd"] * (MAX_CHECKED_PARTS + 1)), workspace=ws)
    assert plan == CommandPlan(parts=[], unsafe=f"it has too many commands to check ({MAX_CHECKED_PARTS + 1})")


def test_the_path_limit_counts_across_parts_and_is_inclusive(ws):
    half = MAX_CHECKED_PATHS // 2
    names = [f"f{i}" for i in range(MAX_CHECKED_PATHS)]
    at_limit = "cat " + " ".join(names[:half]) + " && cat " + " ".join(names[half:])
    assert analyse_command(at_limit, workspace=ws).unsafe == ""
    plan = analyse_command(at_limit + " one-more", workspace=ws)
    assert plan.unsafe == "it names too many paths to check" and len(plan.parts) == 2
    # the same word twice in one part is checked once
    assert analyse_command("cat " + " ".join(names + names[:1]), workspace=ws).unsafe == ""


def test_words_that_name_nothing_are_not_checked(ws):
    assert analyse_command("cat - /dev/null", workspace=ws).read_only == [True]
    assert _path_reason("", str(ws), {str(ws)}) == ""


def test_a_path_too_long_or_unresolvable_asks(ws):
    long = "a/" * 2048 + "b"
    assert analyse_command(f"cat {long}", workspace=ws).unsafe == f"it names {long} (too long to check)"
    assert _path_reason("a" * 4096, str(ws), {str(ws)}) == ""
    assert _path_reason("a\x00b", str(ws), {str(ws)}) == "it cannot be resolved"
    assert _path_reason("x/.git/config", None, set()) == "files under .git/ control the repository"


def test_input_redirections_name_files_too(ws):
    assert analyse_command("wc -l < a.txt", workspace=ws).read_only == [True]
    assert analyse_command("wc -l < ../x", workspace=ws).unsafe == "it names ../x (it is outside the workspace)"
    assert analyse_command("pytest < ../x", workspace=ws).unsafe == "it names ../x (it is outside the workspace)"


def test_a_symlink_out_of_the_workspace_is_outside(ws, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (ws / "out").symlink_to(tmp_path / "elsewhere")
    assert analyse_command("ls out", workspace=ws).unsafe == "it names out (it is outside the workspace)"
    assert (
        analyse_command("ls sub/../../x", workspace=ws).unsafe == "it names sub/../../x (it is outside the workspace)"
    )


def test_a_command_that_is_not_read_only_still_has_its_paths_checked(ws):
    plan = analyse_command("rm -f a.txt", workspace=ws)
    assert plan == CommandPlan(parts=[["rm", "-f", "a.txt"]], read_only=[False], cwds=[str(ws)])
    assert analyse_command("rm -f --file=../x", workspace=ws).unsafe == "it names ../x (it is outside the workspace)"


def test_a_read_only_program_must_come_from_outside_the_workspace(monkeypatch, ws):
    bin_dir = ws / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "cat"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    plan = analyse_command("cat a.txt && cat a.txt && echo hi", workspace=ws)
    assert plan.read_only == [False, False, True]  # echo is a builtin: no PATH lookup
    (bin_dir / "ls").write_text("#!/bin/sh\n")
    (bin_dir / "ls").chmod(0o755)
    assert analyse_command("ls", workspace=ws).read_only == [False]
    # a relative or empty PATH entry may be the workspace: nothing but builtins counts
    for search in ("bin:/usr/bin:/bin", f"/usr/bin{os.pathsep}{os.pathsep}/bin"):
        monkeypatch.setenv("PATH", search)
        assert analyse_command("cat a.txt && pwd", workspace=ws).read_only == [False, True], search
    # no PATH at all: nothing tells where a program comes from
    monkeypatch.delenv("PATH")
    assert analyse_command("cat a.txt && pwd", workspace=ws).read_only == [False, True]
    # a program found nowhere runs nothing
    monkeypatch.setenv("PATH", "/nonexistent")
    assert analyse_command("cat a.txt", workspace=ws).read_only == [True]
    # a workspace that is a prefix of the program's folder name is not its parent
    sibling = Path(str(ws) + "-bin")
    sibling.mkdir()
    (sibling / "cat").write_text("#!/bin/sh\n")
    (sibling / "cat").chmod(0o755)
    monkeypatch.setenv("PATH", str(sibling))
    assert analyse_command("cat a.txt", workspace=ws).read_only == [True]


def test_git_flags_of_a_plan():
    plan = CommandPlan(parts=[["git", "status"], ["ls"]], read_only=[True, False])
    assert plan.runs_git and plan.git_read_only
    assert not CommandPlan(parts=[["git", "status"]], read_only=[False]).git_read_only
    assert not CommandPlan(parts=[["git", "status"]]).git_read_only
    assert not CommandPlan(parts=[["ls"]], read_only=[True]).runs_git
    assert not CommandPlan(parts=[["ls"]], read_only=[True]).git_read_only
    assert CommandPlan(parts=[["git", "log"], ["git", "status"]], read_only=[True, True]).git_read_only
    assert not CommandPlan(parts=[["git", "log"], ["git", "push"]], read_only=[True, False]).git_read_only


@pytest.mark.parametrize(
    "words, scope",
    [
        (["git", "status"], "git status"),
        (["git"], "git"),
        (["git", "-x"], "git -x"),  # an option before the subcommand: not every git command
        (["npm", "run:dev"], "npm run:dev"),
        (["a", "b_c-d9"], "a b_c-d9"),
        (["ls", "a.txt"], "ls"),
        (["ls", "1x"], "ls"),
        (["ls", ""], "ls"),
        (["x", "a/b"], "x"),
    ],
)
def test_what_always_covers(words, scope):
    assert command_scope(words) == scope


@pytest.mark.parametrize(
    "words, prefix, matches",
    [
        (["pytest", "-x"], "pytest", True),
        (["git", "statusx"], "git status", False),
        (["git"], "git status", False),
        (["git", "status", "-s"], "git  status", True),
        (["a"], "", False),
        (["a"], "  ", False),
    ],
)
def test_rules_match_whole_words(words, prefix, matches):
    assert prefix_matches(words, prefix) is matches


@pytest.mark.parametrize(
    "path, why",
    [
        (".git/config", "files under .git/ control the repository"),
        ("a/.GIT/x", "files under .git/ control the repository"),
        (".env", ".env files usually hold secrets"),
        ("x/.env.local", ".env files usually hold secrets"),
        (".envrc", ".env files usually hold secrets"),
        ("x.env", ""),
        (".cairn/config.toml", "the project's cairn config holds these permissions"),
        ("sub/.Cairn/Config.toml", "the project's cairn config holds these permissions"),
        (".cairn/other.toml", ""),
        ("config.toml", ""),
        ("a.txt", ""),
        ("", ""),
    ],
)
def test_protected_names(path, why):
    assert protected_reason(path, None) == why


def test_protected_paths_in_a_workspace(ws):
    assert protected_reason("../x", ws) == "it is outside the workspace"
    assert protected_reason("/etc/passwd", ws) == "it is outside the workspace"
    assert protected_reason(str(ws) + "-sibling/x", ws) == "it is outside the workspace"
    assert protected_reason(".", ws) == ""
    assert protected_reason(str(ws / "a.txt"), ws) == ""
    assert protected_reason(".git", ws) == "files under .git/ control the repository"
    assert protected_reason("sub/../.env", ws) == ".env files usually hold secrets"
    # the workspace's own name is not checked, only what is inside it
    env_ws = ws / ".env-project"
    env_ws.mkdir()
    assert protected_reason("a.txt", env_ws) == ""


def test_the_root_as_workspace_holds_every_program():
    assert analyse_command("cat a.txt", workspace=Path("/")).read_only == [False]


def test_words_naming_nothing_are_skipped_wherever_the_command_runs(ws):
    """`''` and `-` name no file even from a folder outside the workspace."""
    for word in ("''", "-"):
        plan = analyse_command(f"cat {word}", workspace=ws, cwd="..")
        assert plan.unsafe == "" and plan.read_only == [True], word
    assert analyse_command("cat x", workspace=ws, cwd="..").unsafe == "it names x (it is outside the workspace)"
