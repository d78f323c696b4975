"""Discovery (agent/skills/catalog.py): where skills are found, which wins a name, what is
skipped and said, what a repository's symlinks cannot reach, and the catalog's cap."""

from __future__ import annotations

import os

import pytest

from agent.skills.catalog import (
    CATALOG_DESCRIPTION_CHARS,
    MAX_SKILL_BYTES,
    discover,
    other_files,
    read_body,
    user_folders,
)
from tests.skills.helpers import CLAUDE_CODE_SKILL, write_many, write_skill


@pytest.fixture
def user_root(_isolated_home):
    return _isolated_home / "skills"


def test_with_cairn_home_only_its_folder_and_claude_codes_are_read(_isolated_home, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))  # as conftest does: never the real one
    assert user_folders() == [tmp_path / "claude" / "skills", _isolated_home / "skills"]


def test_without_cairn_home_the_other_agents_folders_are_read_and_cairns_wins(monkeypatch, tmp_path):
    monkeypatch.delenv("CAIRN_HOME")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    folders = user_folders()
    assert folders[:3] == [tmp_path / ".agents/skills", tmp_path / ".claude/skills", tmp_path / ".cairn/skills"]
    assert folders[-1] == tmp_path / "config" / "cairn" / "skills"
    write_skill(tmp_path / ".claude/skills", "lint", "Claude Code's lint skill.", "claude body")
    write_skill(tmp_path / ".cairn/skills", "lint", "cairn's lint skill.", "cairn body")
    write_skill(tmp_path / ".agents/skills", "deploy", "The shared deploy skill.", "deploy body")
    catalog = discover(tmp_path / "ws")
    assert {name: s.description for name, s in catalog.skills.items()} == {
        "deploy": "The shared deploy skill.",
        "lint": "cairn's lint skill.",
    }


def test_user_and_project_skills_the_project_winning_a_name(user_root, workspace):
    write_skill(user_root, "release", "How I release.", "user body", files={"notes.md": "n"})
    write_skill(user_root, "style", "My style.", "style body")
    write_skill(workspace / ".claude/skills", "release", "How this project releases.", "project body")
    write_skill(workspace / ".agents/skills", "docs", "Docs conventions.", "docs body")
    catalog = discover(workspace)
    assert [(s.name, s.source) for s in catalog.skills.values()] == [
        ("docs", "project"),
        ("release", "project"),
        ("style", "user"),
    ]
    release = catalog.get("release")
    assert release.folder == workspace / ".claude/skills/release"
    assert read_body(catalog, release) == "project body"
    assert catalog.read_roots() == [str((user_root / "style").resolve())]  # a project's is in the workspace
    assert catalog.notices == []


def test_a_claude_code_skill_is_read_unchanged(workspace):
    folder = workspace / ".claude/skills/webapp-testing"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(CLAUDE_CODE_SKILL)
    (folder / "scripts/with_server.py").write_text("# helper\n")
    (folder / "LICENSE.txt").write_text("terms\n")
    catalog = discover(workspace)
    skill = catalog.get("webapp-testing")
    assert skill is not None and skill.source == "project"
    assert skill.description.startswith("Toolkit for interacting with and testing local web applications")
    body = read_body(catalog, skill)
    assert body.startswith("# Web Application Testing") and "---" not in body.splitlines()[0]
    assert "CLAUDE_CODE_MARKER_7f3a" in body and "allowed-tools" not in body
    assert other_files(catalog, skill) == (["LICENSE.txt", "scripts/with_server.py"], 2)


def test_bad_skills_are_skipped_with_a_notice(user_root, workspace):
    write_skill(user_root, "Bad_Name", "A description.", "x")
    (user_root / "no-description").mkdir(parents=True)
    (user_root / "no-description" / "SKILL.md").write_text("---\nname: no-description\n---\n\n")
    (user_root / "binary").mkdir()
    (user_root / "binary" / "SKILL.md").write_bytes(b"---\nname: binary\ndescription: \xff\xfe\n---\n")
    (user_root / "huge").mkdir()
    (user_root / "huge" / "SKILL.md").write_text("---\nname: huge\ndescription: d\n---\n" + "x" * MAX_SKILL_BYTES)
    (user_root / "not-a-skill").mkdir()  # a folder without SKILL.md: not a skill, nothing to say
    (user_root / "README.md").write_text("my skills\n")
    (user_root / ".hidden").mkdir()
    write_skill(user_root, "good", "A good one.", "fine")
    catalog = discover(workspace)
    assert list(catalog.skills) == ["good"]
    notices = "\n".join(catalog.notices)
    assert len(catalog.notices) == 4, notices
    assert "'Bad_Name' is not lowercase letters, digits and hyphens" in notices
    assert "no-description/SKILL.md: it has no description (front matter `description:`) and no body" in notices
    assert "binary/SKILL.md: it is not UTF-8 text" in notices
    assert "huge/SKILL.md: it is larger than 256 KiB" in notices


def test_a_missing_description_is_the_bodys_first_line_and_when_to_use_follows_it(user_root, workspace):
    """Claude Code's listing: no `description`, the body's first non-empty line; `when_to_use`
    appended to the description."""
    (user_root / "lint").mkdir(parents=True)
    (user_root / "lint" / "SKILL.md").write_text("---\nname: lint\n---\n\nRun the house linters.\nMore.\n")
    (user_root / "deploy").mkdir(parents=True)
    (user_root / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploys the app.\nwhen_to_use: When the user says ship it.\n---\nbody\n"
    )
    catalog = discover(workspace)
    assert catalog.get("lint").description == "Run the house linters."
    assert "- deploy: Deploys the app. When the user says ship it." in catalog.text()


def test_a_missing_name_is_the_folders(user_root, workspace):
    (user_root / "fmt").mkdir(parents=True)
    (user_root / "fmt" / "SKILL.md").write_text("---\ndescription: >\n  Formats code\n  the house way.\n---\nbody\n")
    assert discover(workspace).get("fmt").description == "Formats code the house way."


def test_a_repositorys_symlinks_out_of_the_workspace_are_not_followed(workspace, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "SKILL.md").write_text("---\nname: leak\ndescription: SECRET_DESCRIPTION\n---\nSECRET_BODY\n")
    skills = workspace / ".claude/skills"
    (skills / "leak").mkdir(parents=True)
    (skills / "leak" / "SKILL.md").symlink_to(secret / "SKILL.md")  # the file is a link out
    (skills / "linked-folder").symlink_to(secret)  # the folder is a link out
    catalog = discover(workspace)
    assert catalog.skills == {}
    notices = "\n".join(catalog.notices)
    assert "leak/SKILL.md: it is a symlink, which cairn does not follow" in notices
    assert "linked-folder/SKILL.md: it is reached through the symlink" in notices
    assert "SECRET" not in repr(catalog)


def test_a_symlinked_skills_folder_in_a_repository_is_not_read(workspace, tmp_path):
    write_skill(tmp_path / "elsewhere", "leak", "SECRET_DESCRIPTION", "SECRET_BODY")
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn/skills").symlink_to(tmp_path / "elsewhere")
    catalog = discover(workspace)
    assert catalog.skills == {} and "symlink" in catalog.notices[0]


def test_a_users_symlinked_skill_is_followed(user_root, workspace, tmp_path):
    real = write_skill(tmp_path / "dotfiles", "mine", "Linked from my dotfiles.", "dotfile body")
    user_root.mkdir(parents=True)
    (user_root / "mine").symlink_to(real)
    catalog = discover(workspace)
    assert catalog.get("mine").folder == real.resolve() and catalog.read_roots() == [str(real.resolve())]


def test_other_files_skip_symlinks_and_hidden_names(user_root, workspace, tmp_path):
    folder = write_skill(user_root, "tools", "Tools.", "b", files={"a/b/c.txt": "c", "ref.md": "r", ".git/x": "x"})
    (tmp_path / "outside.txt").write_text("o")
    os.symlink(tmp_path / "outside.txt", folder / "link.txt")
    os.symlink(tmp_path, folder / "linked-dir")
    catalog = discover(workspace)
    assert other_files(catalog, catalog.get("tools")) == (["a/b/c.txt", "ref.md"], 2)


def test_the_catalog_lists_name_and_description_and_says_what_it_left_out(user_root, workspace):
    names = write_many(user_root, 40)
    write_skill(user_root, "zz-long", "word " * 400, "long body")
    catalog = discover(workspace)
    text = catalog.text()
    for i, name in enumerate(names):
        assert f"- {name}: Use for task kind {i:02d} (the {name} conventions)." in text
    long_line = next(line for line in text.splitlines() if line.startswith("- zz-long: "))
    assert CATALOG_DESCRIPTION_CHARS - 2 <= len(long_line) - len("- zz-long: ") <= CATALOG_DESCRIPTION_CHARS
    assert CATALOG_DESCRIPTION_CHARS == 1536 and long_line.endswith("word…")  # Claude Code's listing limit
    assert "described above" not in text and "BODY_MARKER" not in text
    line = len("- skill-00: Use for task kind 00 (the skill-00 conventions).") + 1
    capped = catalog.text(max_chars=10 * line).splitlines()
    whole = [row for row in capped if row.startswith("- ")]
    assert 5 <= len(whole) < 10 and whole == text.splitlines()[: len(whole)]  # room kept for the others' names
    assert capped[len(whole)].startswith("Also available (name only): ")
    named = capped[len(whole)].removeprefix("Also available (name only): ").split(", ")
    assert named == names[len(whole) : len(whole) + len(named)]
    hidden = 41 - len(whole) - len(named)
    assert hidden > 0 and capped[-1].startswith(
        f"({len(whole)} of the 41 skills are described above, {len(named)} more are named only, "
        f"and {hidden} more not listed at all: the list is kept within its budget. Call skill-load with `query`"
    )
    assert len(capped) == len(whole) + 2
