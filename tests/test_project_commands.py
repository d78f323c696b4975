"""Command files (`.cairn/commands/*.md`, agent/commands/): parsing, expansion, precedence, bad files,
and the TUI sending `/name args` as its expanded block (checked in the request the fake got)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from agent.commands.catalog import find_command, list_commands
from agent.commands.invocation import ExpandContext, command_sources, expand_body, resolve
from agent.paths import config_dir
from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice, UserMessage
from tests.fakes.llm_server import text

SIZE = (120, 36)


def expand(command, args: str) -> str:
    return expand_body(command.name, command.body, args)


def expand_text(workspace: Path, text: str) -> str | None:
    """What the runtime would send for `text` when its command has no `!` and no `@`."""
    found = resolve(command_sources(workspace, None), text, [])
    if found is None:
        return None
    invocable, args = found
    expansion = invocable.expand(args, ExpandContext(workspace=workspace, trusted=lambda: False))
    return expand_body(expansion.name, expansion.body, "") + (f"\n\n{expansion.tail}" if expansion.tail else "")


def write(folder: Path, name: str, content: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.fixture
def project(workspace) -> Path:
    return workspace / ".cairn" / "commands"


@pytest.fixture
def user() -> Path:
    return config_dir() / "commands"  # CAIRN_HOME of this test


# -- parsing ----------------------------------------------------------------------------------
def test_front_matter_description_and_body(workspace, project):
    write(project, "review.md", '---\ndescription: "Review a file for bugs"\nmodel: x\n---\n\nReview $ARGUMENTS.\n')
    [command] = list_commands(workspace)
    assert command.name == "review"
    assert command.description == "Review a file for bugs"
    assert command.body == "Review $ARGUMENTS."
    assert command.path == project / "review.md"


def test_description_from_first_line_clipped(workspace, project):
    write(project, "plan.md", "\n\n# Plan the change step by step\n\nThen do it.")
    write(project, "long.md", "x" * 200)
    by_name = {c.name: c for c in list_commands(workspace)}
    assert by_name["plan"].description == "Plan the change step by step"
    assert by_name["plan"].body == "# Plan the change step by step\n\nThen do it."
    assert len(by_name["long"].description) <= 80 and by_name["long"].description.endswith("…")


def test_unclosed_front_matter_is_body(workspace, project):
    write(project, "odd.md", "---\ndescription: never closed\nDo the thing.")
    [command] = list_commands(workspace)
    assert command.body == "---\ndescription: never closed\nDo the thing."


# -- expansion ----------------------------------------------------------------------------------
def test_expand_replaces_arguments(workspace, project):
    write(project, "review.md", "Review $ARGUMENTS.\nThen test $ARGUMENTS again.")
    command = find_command(workspace, "review")
    assert (
        expand(command, "  src/x.py ")
        == '<command name="review">\nReview src/x.py.\nThen test src/x.py again.\n</command>'
    )
    assert expand(command, "") == '<command name="review">\nReview .\nThen test  again.\n</command>'


def test_expand_appends_arguments_without_placeholder(workspace, project):
    write(project, "fix.md", "Fix the bug the user names.")
    command = find_command(workspace, "fix")
    assert (
        expand(command, "the flaky\ntest")
        == '<command name="fix">\nFix the bug the user names.\n</command>\n\nthe flaky\ntest'
    )
    assert expand(command, "  ") == '<command name="fix">\nFix the bug the user names.\n</command>'


def test_expand_text(workspace, project):
    write(project, "review.md", "Review $ARGUMENTS.")
    assert expand_text(workspace, "/review a.py b.py") == '<command name="review">\nReview a.py b.py.\n</command>'
    assert expand_text(workspace, "  /REVIEW\na.py  ") == '<command name="review">\nReview a.py.\n</command>'
    assert expand_text(workspace, "/review") == '<command name="review">\nReview .\n</command>'
    assert expand_text(workspace, "/nothing here") is None
    assert expand_text(workspace, "review a.py") is None
    assert expand_text(workspace, "/usr/bin/env python") is None
    assert expand_text(workspace, "/") is None


# -- where commands come from ---------------------------------------------------------------------
def test_project_wins_over_user_and_sorted(workspace, project, user):
    write(user, "review.md", "---\ndescription: the user's review\n---\nUser review.")
    write(user, "deploy.md", "Deploy it.")
    write(project, "review.md", "---\ndescription: the project's review\n---\nProject review.")
    write(project, "audit.md", "Audit it.")
    listed = list_commands(workspace)
    assert [c.name for c in listed] == ["audit", "deploy", "review"]
    assert {c.name: c.description for c in listed}["review"] == "the project's review"
    assert find_command(workspace, "review").body == "Project review."
    assert find_command(workspace, "deploy").path == user / "deploy.md"


def test_bad_files_are_skipped(workspace, project, user):
    write(project, "good.md", "Good.")
    write(project, "Upper_Case-1.md", "Named by its lowercased stem.")
    write(project, "has space.md", "Ignored: a space in the name.")
    write(project, "ünicode.md", "Ignored: not [a-z0-9_-].")
    write(project, "notes.txt", "Ignored: not Markdown.")
    write(project, "binary.md", b"\xff\xfe\x00bad utf-8")
    (project / "folder.md").mkdir()
    os.symlink(project / "missing-target", project / "dangling.md")
    write(user, "binary.md", "The user's readable one stands in.")
    names = [c.name for c in list_commands(workspace)]
    assert names == ["binary", "good", "upper_case-1"]
    assert find_command(workspace, "binary").path == user / "binary.md"
    assert find_command(workspace, "dangling") is None
    assert find_command(workspace, "folder") is None
    assert find_command(workspace, "has space") is None
    assert find_command(workspace, "../good") is None


def test_no_folders(workspace):
    assert list_commands(workspace) == []
    assert find_command(workspace, "review") is None
    assert expand_text(workspace, "/review x") is None


# -- the TUI --------------------------------------------------------------------------------------
async def test_tui_sends_expanded_command(workspace, project, server):
    from tests.ui.conftest import run_prompt, send, wait_ready

    write(project, "review.md", "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS for bugs.")
    write(project, "help.md", "A project command may not shadow /help.")
    settings = load_settings(
        workspace, flags={"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test"}
    )
    server.add(text("Reviewed."))
    app = CairnApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        # Completion lists it with its description; the built-in /help stays the only "help".
        app.prompt.insert("/re")
        await pilot.pause()
        popup = app.query_one("#slash-popup")
        ids = [popup.get_option_at_index(i).id for i in range(popup.option_count)]
        assert "review" in ids and "rename" in ids
        assert "Review a file for bugs" in _plain(popup.get_option_at_index(ids.index("review")).prompt)
        app.prompt.clear()
        await pilot.pause()

        await send(pilot, "/help")
        help_text = [n.text for n in app.chat.query(Notice) if n.kind == "help"][-1]
        assert "/review [arguments]" in help_text and "Review a file for bugs" in help_text
        assert "shadow" not in help_text
        assert server.requests == []

        await run_prompt(pilot, "/review src/x.py")
        [request] = server.requests
        users = [m for m in request["messages"] if m["role"] == "user"]
        content = users[-1]["content"]
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        assert '<command name="review">\nReview src/x.py for bugs.\n</command>' in content
        assert [u.text for u in app.chat.query(UserMessage)] == ["/review src/x.py"]
        assert app.chat.assistant_messages[-1].text == "Reviewed."

        await send(pilot, "/nosuch thing")
        assert "Unknown command /nosuch" in app.chat.query(Notice).last().text
        assert len(server.requests) == 1
        session_id = app.runtime.session.id

    # Shown again (resume): what the user typed, not the whole block.
    resumed = CairnApp(settings, resume_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        from tests.ui.conftest import wait_for

        await wait_ready(pilot)
        await wait_for(pilot, lambda: resumed.chat.query(UserMessage), what="the history")
        assert [u.text for u in resumed.chat.query(UserMessage)] == ["/review src/x.py"]


def _plain(renderable) -> str:
    """A popup row's text as the terminal shows it (a row is a two-column grid, not a string)."""
    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()
