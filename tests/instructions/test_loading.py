"""Which instruction files a session starts with, each once, and the imports they pull in:
checked in the system prompt cairn builds (the text every request carries)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.instructions import instructions_for, load_instructions
from agent.instructions.imports import import_tokens
from agent.prompt import build_system_prompt


def _prompt(workspace: Path) -> tuple[str, list[str]]:
    notices: list[str] = []
    return build_system_prompt(workspace, notices=notices), notices


def test_agents_md_and_claude_md_both_reach_the_model(workspace, home):
    (workspace / "AGENTS.md").write_text("AGENTS_MARKER\n")
    (workspace / "CLAUDE.md").write_text("CLAUDE_MARKER\n")
    system, notices = _prompt(workspace)
    assert "AGENTS_MARKER" in system and "CLAUDE_MARKER" in system and notices == []


@pytest.mark.parametrize("how", ["identical", "symlink", "import"])
def test_agents_md_and_claude_md_the_same_text_is_sent_once(workspace, home, how):
    (workspace / "AGENTS.md").write_text("AGENTS_MARKER: run make check.\n")
    if how == "identical":
        (workspace / "CLAUDE.md").write_text("AGENTS_MARKER: run make check.\n")
    elif how == "symlink":
        os.symlink("AGENTS.md", workspace / "CLAUDE.md")
    else:
        (workspace / "CLAUDE.md").write_text("@AGENTS.md\n")
    system, notices = _prompt(workspace)
    assert system.count("AGENTS_MARKER") == 1 and notices == []


def test_claude_local_md_and_dot_claude_claude_md_and_the_users_files(workspace, home, _isolated_home):
    (home / ".claude" / "CLAUDE.md").write_text("USER_MARKER\n")
    (_isolated_home / "AGENTS.md").write_text("CAIRN_USER_MARKER\n")  # cairn's own user file (config folder)
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "CLAUDE.md").write_text("DOT_CLAUDE_MARKER\n")
    (workspace / "CLAUDE.local.md").write_text("LOCAL_MARKER\n")
    system, _ = _prompt(workspace)
    order = ["USER_MARKER", "CAIRN_USER_MARKER", "DOT_CLAUDE_MARKER", "LOCAL_MARKER"]
    assert [system.index(m) for m in order] == sorted(system.index(m) for m in order)
    assert "Instructions from ~/.claude/CLAUDE.md (your private global instructions" in system
    assert "Project instructions from CLAUDE.local.md (your private project instructions" in system


def test_an_import_cycle_reads_each_file_once(workspace, home):
    (workspace / "CLAUDE.md").write_text("ROOT_MARKER @docs/a.md\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_text("A_MARKER @b.md\n")
    (workspace / "docs" / "b.md").write_text("B_MARKER @a.md @../CLAUDE.md\n")
    system, notices = _prompt(workspace)
    assert [system.count(m) for m in ("ROOT_MARKER", "A_MARKER", "B_MARKER")] == [1, 1, 1]
    assert notices == []


def test_imports_in_code_are_not_followed(workspace, home):
    for name in ("fenced", "tilde", "span", "indented", "prose"):
        (workspace / f"{name}.md").write_text(f"{name.upper()}_MARKER\n")
    (workspace / "CLAUDE.md").write_text(
        "Read @prose.md first.\n\n```sh\ncat @fenced.md\n```\n\n~~~\n@tilde.md\n~~~\n\n"
        "Use `@span.md` in a code span.\n\n    @indented.md\n\nMail me at dev@example.com.\n"
    )
    system, notices = _prompt(workspace)
    assert "PROSE_MARKER" in system
    for marker in ("FENCED_MARKER", "TILDE_MARKER", "SPAN_MARKER", "INDENTED_MARKER"):
        assert marker not in system
    assert notices == []


def test_import_tokens_as_claude_code_reads_them():
    assert import_tokens("See @README.md, @docs/a\\ b.md and @~/x.md; @@odd user@host @./y.md") == [
        "README.md,",
        "docs/a b.md",
        "~/x.md;",
        "./y.md",
    ]


def test_a_symlink_import_out_of_the_repository_is_refused(workspace, home, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET_MARKER\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("AWS_MARKER\n")
    os.symlink(secret, workspace / "notes.md")
    (workspace / "CLAUDE.md").write_text("ROOT_MARKER\n@notes.md\n@~/.aws/credentials\n@../secret.txt\n")
    system, notices = _prompt(workspace)
    assert "ROOT_MARKER" in system
    assert "SECRET_MARKER" not in system and "AWS_MARKER" not in system
    assert len(notices) == 3 and all(n.startswith("Not importing @") for n in notices)
    assert "outside the workspace" in notices[0]  # the symlink, through repo_files
    assert "outside the repository" in notices[1] and "outside the repository" in notices[2]


def test_the_users_own_file_may_import_from_home(workspace, home):
    (home / ".claude" / "CLAUDE.md").write_text("@~/notes/style.md\n")
    (home / "notes").mkdir()
    (home / "notes" / "style.md").write_text("STYLE_MARKER\n")
    system, notices = _prompt(workspace)
    assert "STYLE_MARKER" in system and "imported by ~/.claude/CLAUDE.md" in system and notices == []


def test_imports_stop_at_depth_five(workspace, home):
    (workspace / "CLAUDE.md").write_text("@d1.md\n")
    for depth in range(1, 8):
        (workspace / f"d{depth}.md").write_text(f"DEPTH_{depth}_MARKER @d{depth + 1}.md\n")
    system, notices = _prompt(workspace)
    assert "DEPTH_5_MARKER" in system and "DEPTH_6_MARKER" not in system
    assert notices == ["Not following the imports of d5.md: deeper than 5 imports"]


def test_a_missing_import_is_a_notice_and_prose_at_signs_are_not(workspace, home):
    (workspace / "CLAUDE.md").write_text("ROOT_MARKER. Use @param in docstrings. See @docs/gone.md.\n")
    system, notices = _prompt(workspace)
    assert "ROOT_MARKER" in system
    assert notices == ["Not importing @docs/gone.md (from CLAUDE.md): it does not exist"]


def test_the_total_is_capped_and_the_notice_says_so(workspace, home):
    (workspace / "CLAUDE.md").write_text("A" * 30_000 + "\n@more.md\n@last.md\n")
    (workspace / "more.md").write_text("B" * 30_000)
    (workspace / "last.md").write_text("LAST_MARKER")
    loaded = load_instructions(workspace)
    assert sum(len(f.text) for f in loaded.files) == 40_000
    system, notices = _prompt(workspace)
    assert "LAST_MARKER" not in system and "cut at the 40,000-character cap" in system
    assert notices == ["Instruction text is capped at 40,000 characters: more.md (cut), last.md were left out"]


def test_a_subfolders_instructions_are_given_once(workspace, home):
    (workspace / "AGENTS.md").write_text("ROOT_MARKER\n")
    (workspace / "pkg" / "src").mkdir(parents=True)
    (workspace / "pkg" / "CLAUDE.md").write_text("PKG_MARKER @../docs/pkg.md\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "pkg.md").write_text("PKG_DOC_MARKER\n")
    os.symlink("../AGENTS.md", workspace / "pkg" / "AGENTS.md")  # the root's: given at start already
    given: set[str] = set()
    found = instructions_for(workspace, ["pkg/src/a.py"], given)
    assert found is not None
    appended, files = found
    assert files == ["pkg/CLAUDE.md", "docs/pkg.md"]
    assert "PKG_MARKER" in appended and "PKG_DOC_MARKER" in appended and "ROOT_MARKER" not in appended
    assert instructions_for(workspace, ["pkg/b.py", str(workspace / "pkg")], given) is None
    assert instructions_for(workspace, ["README.md", "../elsewhere/x.py"], set()) is None


def test_a_workspace_that_is_no_folder_has_no_project_files(tmp_path, home, monkeypatch):
    """A session recorded elsewhere (`D:\\oh-my-posh` read back on Linux) names a workspace that
    does not exist here: relative to our folder, it must not pick up our repository's files."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("Our own rules.\n")
    monkeypatch.chdir(repo)
    loaded = load_instructions(Path("D:\\oh-my-posh"))
    assert loaded.files == [] and loaded.notices == []
