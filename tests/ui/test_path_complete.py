"""`@` completion's listing and ranking (agent/ui/path_complete.py)."""

from __future__ import annotations

import subprocess

from agent.ui.path_complete import inserted, mention_before, rank, workspace_paths


def test_mention_before_finds_the_at_token_at_the_cursor():
    assert mention_before("look at @src/ma") == (8, "src/ma")
    assert mention_before("@") == (0, "")
    assert mention_before("mail me@example") is None  # not after a space: an address, not a path
    assert mention_before("@done and more") is None  # the cursor is past it


def test_fuzzy_ranking_prefers_names_then_fewer_gaps_then_shorter_paths():
    paths = ["agent/ui/path_complete.py", "agent/ui/app.py", "apps/", "apps/cli/main.py", "README.md"]
    assert rank(paths, "uipcm", 5) == ["agent/ui/path_complete.py"]  # letters in order, anywhere
    assert rank(paths, "apcm", 5)[-1] == "agent/ui/path_complete.py"
    assert rank(paths, "app", 3) == ["apps/", "agent/ui/app.py", "apps/cli/main.py"]
    assert rank(paths, "README", 5) == rank(paths, "readme", 5) == ["README.md"]
    assert rank(paths, "zz", 5) == []
    assert rank(paths, "", 2) == ["apps/", "README.md"]  # top level first


def test_a_typed_folder_offers_what_is_in_it():
    paths = ["docs/", "docs/guide.md", "docs/api/", "docs/api/ref.md", "src/docs.py"]
    assert rank(paths, "docs/", 3) == ["docs/api/", "docs/guide.md", "docs/api/ref.md"]
    assert rank(paths, "docs/g", 1) == ["docs/guide.md"]


def test_the_listing_leaves_out_what_git_ignores_and_the_git_folder(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.js").write_text("x")
    (tmp_path / "debug.log").write_text("x")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("x")
    (tmp_path / ".env.example").write_text("x")
    paths = workspace_paths(tmp_path)
    assert "src/main.py" in paths and "src/" in paths and ".env.example" in paths and ".gitignore" in paths
    assert not any(p.startswith(("build", ".git/")) or p.endswith(".log") for p in paths)


def test_a_path_with_a_space_is_quoted():
    assert inserted("docs/my notes.md") == '@"docs/my notes.md"'
    assert inserted("a.py") == "@a.py"
