"""Files cairn itself reads from a repository (agent/fs/repo_files.py) and the callers that read
through it: a symlink out of the workspace, a FIFO or a huge file is refused with a notice,
never read, never a hang (SPEC §13.1: a cloned repository is untrusted input).

A FIFO would block an `open()` forever: each call that meets one runs under `bounded`, so a
regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.fs import repo_files
from agent.fs.repo_files import (
    FileMissing,
    FileTooLarge,
    NotRegularFile,
    OutsideWorkspace,
    SymlinkRefused,
    list_repo_folder,
    read_own_file,
    read_repo_file,
)
from tests.hostile.conftest import bounded_sync

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- never sent"
HANG_SECONDS = 30.0  # one call that takes longer than this is hanging


def bounded(fn: Callable[[], Any], fifos: list[Path] = ()) -> Any:
    """`fn()` under the hostile tests' hang guard; on a hang the FIFOs get a writer, so the
    stuck thread ends instead of lingering."""
    try:
        return bounded_sync(fn, HANG_SECONDS)
    except AssertionError as exc:
        if "did not finish" in str(exc):
            for fifo in fifos:
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        raise


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file outside the workspace (stands in for ~/.ssh/id_rsa)."""
    secret = tmp_path / "id_rsa"
    secret.write_text(SECRET)
    return secret


# -- the helper ---------------------------------------------------------------------------------


def test_a_regular_file_is_read_by_relative_or_absolute_path(workspace):
    (workspace / "docs").mkdir()
    (workspace / "docs" / "a.md").write_bytes(b"hello")
    assert read_repo_file(workspace, "docs/a.md") == b"hello"
    assert read_repo_file(workspace, Path("docs", "a.md")) == b"hello"
    assert read_repo_file(workspace, workspace / "docs" / "a.md") == b"hello"
    assert read_repo_file(workspace.resolve(), workspace / "./docs/../docs/a.md") == b"hello"


def test_a_fifo_is_refused_without_blocking(workspace):
    os.mkfifo(workspace / "pipe")
    with pytest.raises(NotRegularFile, match="FIFO"):
        bounded(lambda: read_repo_file(workspace, "pipe"), [workspace / "pipe"])
    with pytest.raises(NotRegularFile, match="FIFO"):
        bounded(lambda: read_own_file(workspace / "pipe"), [workspace / "pipe"])


def test_devices_folders_and_the_workspace_itself_are_not_files(workspace):
    os.symlink("/dev/zero", workspace / "zero")
    (workspace / "folder").mkdir()
    with pytest.raises(OutsideWorkspace):
        read_repo_file(workspace, "zero", follow_inside=True)
    with pytest.raises(NotRegularFile, match="device"):
        read_own_file("/dev/zero")
    with pytest.raises(NotRegularFile, match="folder"):
        read_repo_file(workspace, "folder")
    with pytest.raises(NotRegularFile):
        read_repo_file(workspace, ".")


def test_symlinks_are_never_followed_unless_asked_and_inside(workspace, outside):
    (workspace / "real.md").write_text("inside")
    os.symlink("real.md", workspace / "alias.md")
    os.symlink(outside, workspace / "key.md")
    os.symlink(outside.parent, workspace / "up")
    for name in ("alias.md", "key.md", "up/id_rsa"):
        with pytest.raises(SymlinkRefused):
            read_repo_file(workspace, name)
    assert read_repo_file(workspace, "alias.md", follow_inside=True) == b"inside"
    for name in ("key.md", "up/id_rsa"):
        with pytest.raises(OutsideWorkspace) as caught:
            read_repo_file(workspace, name, follow_inside=True)
        assert caught.value.resolved == outside.resolve()
        assert "outside the workspace" in caught.value.reason


def test_paths_leading_out_are_refused(workspace, outside):
    for path in ("../id_rsa", "a/../../id_rsa", str(outside)):
        with pytest.raises(OutsideWorkspace):
            read_repo_file(workspace, path)


def test_missing_files_and_dangling_links(workspace):
    os.symlink("nowhere", workspace / "dangling")
    with pytest.raises(FileMissing):
        read_repo_file(workspace, "nope.md")
    with pytest.raises(FileMissing):
        read_repo_file(workspace, "dangling", follow_inside=True)
    with pytest.raises(FileMissing):
        read_repo_file(workspace, "nope/x.md")


def test_a_file_over_the_cap_is_refused_or_cut_where_the_caller_wants(workspace):
    (workspace / "big").write_bytes(b"x" * 5000)
    with pytest.raises(FileTooLarge) as caught:
        read_repo_file(workspace, "big", max_bytes=4096)
    assert (caught.value.size, caught.value.limit) == (5000, 4096) and "larger than 4 KiB" in str(caught.value)
    assert read_repo_file(workspace, "big", max_bytes=4096, truncate=True) == b"x" * 4096
    assert len(read_repo_file(workspace, "big")) == 5000  # under the 1 MiB default
    with pytest.raises(FileTooLarge):
        read_own_file(workspace / "big", max_bytes=10)


def test_a_folder_is_listed_without_following_a_symlinked_one(workspace, outside):
    (workspace / "cmds").mkdir()
    (workspace / "cmds" / "b.md").write_text("")
    (workspace / "cmds" / "a.md").write_text("")
    os.symlink(outside.parent, workspace / "elsewhere")
    assert list_repo_folder(workspace, "cmds") == ["a.md", "b.md"]
    with pytest.raises(SymlinkRefused):
        list_repo_folder(workspace, "elsewhere")
    with pytest.raises(OutsideWorkspace):
        list_repo_folder(workspace, "elsewhere", follow_inside=True)
    with pytest.raises(NotRegularFile, match="not a folder"):
        list_repo_folder(workspace, "cmds/a.md")
    with pytest.raises(FileMissing):
        list_repo_folder(workspace, "none")


def test_every_refusal_is_a_repo_file_error_with_a_reason(workspace):
    os.mkfifo(workspace / "pipe")
    with pytest.raises(repo_files.RepoFileError) as caught:
        bounded(lambda: read_repo_file(workspace, "pipe"), [workspace / "pipe"])
    assert str(caught.value) == f"pipe {caught.value.reason}" and caught.value.path == "pipe"


# -- project commands (.cairn/commands/*.md) ----------------------------------------------------


@pytest.fixture
def commands(workspace) -> Path:
    folder = workspace / ".cairn" / "commands"
    folder.mkdir(parents=True)
    return folder


def test_a_fifo_command_file_does_not_hang_listing_or_help(workspace, commands):
    from agent.commands.catalog import find_command, list_commands
    from agent.ui.commands import help_text

    (commands / "good.md").write_text("---\ndescription: a good one\n---\nDo it.")
    os.mkfifo(commands / "x.md")
    fifos = [commands / "x.md"]
    # What /help shows: built from the listing, with the app's loaded settings.
    app = SimpleNamespace(settings=SimpleNamespace(workspace=workspace))
    text = bounded(lambda: help_text(app), fifos)
    listed_part, _, skipped_part = text.partition("Command files not used")
    assert "/good" in listed_part and "a good one" in listed_part and "/x" not in listed_part
    assert "x.md" in skipped_part and "FIFO" in skipped_part  # said, not listed
    assert bounded(lambda: find_command(workspace, "x"), fifos) is None
    notices: list[str] = []
    listed = bounded(lambda: list_commands(workspace, notices), fifos)
    assert [c.name for c in listed] == ["good"]
    [notice] = notices
    assert "/x" in notice and "FIFO" in notice


def test_a_command_symlinked_out_of_the_workspace_is_never_sent(workspace, commands, outside):
    from agent.commands.catalog import find_command, list_commands
    from agent.commands.invocation import command_sources, resolve

    os.symlink(os.path.relpath(outside, commands), commands / "review.md")  # ../../../id_rsa
    notices: list[str] = []
    assert resolve(command_sources(workspace, None), "/review src/x.py", notices) is None  # sent as typed
    assert find_command(workspace, "review") is None
    assert all(SECRET not in c.body for c in list_commands(workspace))
    [notice] = notices
    assert "/review" in notice and "outside the workspace" in notice


def test_a_symlinked_commands_folder_outside_is_not_listed(workspace, outside):
    from agent.commands.catalog import list_commands

    (outside.parent / "review.md").write_text(SECRET)
    (workspace / ".cairn").mkdir()
    os.symlink(outside.parent, workspace / ".cairn" / "commands")
    assert list_commands(workspace) == []
    notices: list[str] = []
    list_commands(workspace, notices)
    assert len(notices) == 1 and "outside the workspace" in notices[0]


def test_a_command_symlinked_inside_the_workspace_works(workspace, commands):
    from agent.commands.catalog import find_command

    (workspace / "prompts").mkdir()
    (workspace / "prompts" / "review.md").write_text("Review $ARGUMENTS.")
    os.symlink("../../prompts/review.md", commands / "review.md")
    assert find_command(workspace, "review").body == "Review $ARGUMENTS."


def test_an_oversized_command_file_is_skipped_with_a_notice(workspace, commands):
    from agent.commands.catalog import list_commands

    (commands / "huge.md").write_bytes(b"Do it.\n" + b"x" * (1024 * 1024))
    assert list_commands(workspace) == []
    notices: list[str] = []
    list_commands(workspace, notices)
    assert len(notices) == 1 and "/huge" in notices[0] and "larger than" in notices[0]


def test_the_users_own_commands_may_be_symlinks_but_not_fifos(workspace, outside):
    from agent.commands.catalog import list_commands
    from agent.paths import config_dir

    user = config_dir() / "commands"
    user.mkdir(parents=True)
    (outside.parent / "mine.md").write_text("Mine.")
    os.symlink(outside.parent / "mine.md", user / "mine.md")  # a dotfiles manager's link
    os.mkfifo(user / "pipe.md")
    listed = bounded(lambda: list_commands(workspace), [user / "pipe.md"])
    assert [c.name for c in listed] == ["mine"]
    notices: list[str] = []
    list_commands(workspace, notices)
    assert len(notices) == 1 and "FIFO" in notices[0]


# -- project instructions, configs, .mcp.json ---------------------------------------------------


def test_a_fifo_agents_md_gives_a_notice_and_the_next_file_is_read(workspace):
    from agent.prompt import build_system_prompt

    os.mkfifo(workspace / "AGENTS.md")
    (workspace / "CLAUDE.md").write_text("Use tabs.")
    notices: list[str] = []
    prompt = bounded(lambda: build_system_prompt(workspace, notices=notices), [workspace / "AGENTS.md"])
    assert "Project instructions from CLAUDE.md" in prompt and "Use tabs." in prompt
    assert notices == ["Not reading AGENTS.md as project instructions: it is a FIFO (named pipe), not a regular file"]


def test_a_fifo_project_config_is_ignored_with_a_warning(workspace):
    from agent.settings.config import load_config

    (workspace / ".cairn").mkdir()
    os.mkfifo(workspace / ".cairn" / "config.toml")
    loaded = bounded(lambda: load_config(workspace), [workspace / ".cairn" / "config.toml"])
    assert any("config.toml" in w and "FIFO" in w for w in loaded.warnings), loaded.warnings


def test_a_fifo_user_config_is_ignored_with_a_warning(workspace):
    from agent.paths import config_dir
    from agent.settings.config import load_config

    config_dir().mkdir(parents=True, exist_ok=True)
    os.mkfifo(config_dir() / "config.toml")
    loaded = bounded(lambda: load_config(workspace), [config_dir() / "config.toml"])
    assert any("FIFO" in w for w in loaded.warnings), loaded.warnings


def test_a_project_config_symlinked_out_of_the_workspace_is_not_read(workspace, tmp_path):
    from agent.settings.config import load_config, load_settings

    elsewhere = tmp_path / "other.toml"
    elsewhere.write_text("[tools]\nmax_read_lines = 7\n")
    (workspace / ".cairn").mkdir()
    os.symlink(elsewhere, workspace / ".cairn" / "config.toml")
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.tools.max_read_lines != 7
    assert any("outside the workspace" in w for w in loaded.warnings), loaded.warnings
    # Inside the workspace, a link is followed (trust stays keyed on the folder and the bytes).
    (workspace / "shared.toml").write_text("[tools]\nmax_read_lines = 9\n")
    os.remove(workspace / ".cairn" / "config.toml")
    os.symlink("../shared.toml", workspace / ".cairn" / "config.toml")
    assert load_settings(workspace).tools.max_read_lines == 9


def test_a_fifo_mcp_json_does_not_hang(workspace):
    from agent.mcp.servers import read_mcp_json

    os.mkfifo(workspace / ".mcp.json")
    state = bounded(lambda: read_mcp_json(workspace), [workspace / ".mcp.json"])
    assert state is not None and state.servers == {} and state.trusted is False and state.sha256 is None
    assert len(state.problems) == 1 and "FIFO" in state.problems[0]
