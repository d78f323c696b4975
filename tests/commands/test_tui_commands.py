"""Claude Code command files and skills in the TUI (Pilot, the fake server): the `/` popup and
/help list them with description and argument hint, and what reaches the model is the
runtime's expansion (the `!` output inlined, the skill's text), the chat showing what was typed."""

from __future__ import annotations

import io

from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice, UserMessage
from tests.commands.fixtures import COMMIT, COMPONENT, git_repo, user_message, write
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, send, wait_ready

SIZE = (120, 36)
SKILL = """---
name: release-notes
description: Write release notes from the commits since the last tag
---
Write the release notes for version $ARGUMENTS from `git log`.
"""


def _plain(renderable) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def test_popup_help_and_what_reaches_the_model(workspace, claude_home, server):
    git_repo(workspace)
    write(claude_home / "commands", "commit.md", COMMIT)
    write(workspace / ".claude" / "commands" / "frontend", "component.md", COMPONENT)
    write(workspace / ".claude" / "skills" / "release-notes", "SKILL.md", SKILL)
    server.add(text("Committed."))
    server.add(text("Notes written."))
    app = CairnApp(
        load_settings(workspace, flags={"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test"})
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.prompt.insert("/co")
        await pilot.pause()
        popup = app.query_one("#slash-popup")
        rows = {
            popup.get_option_at_index(i).id: _plain(popup.get_option_at_index(i).prompt)
            for i in range(popup.option_count)
        }
        assert "/component <Name> [folder]" in rows["component"]
        assert "Scaffold a React component (project:frontend)" in rows["component"]
        assert "/commit [message]" in rows["commit"] and "Create a git commit (user)" in rows["commit"]
        app.prompt.clear()
        await pilot.pause()

        await send(pilot, "/help")
        help_text = [n.text for n in app.chat.query(Notice) if n.kind == "help"][-1]
        assert "/release-notes" in help_text and "Write release notes from the commits" in help_text
        assert "/commit [message]" in help_text

        await run_prompt(pilot, "/commit tidy")
        sent = user_message(server.requests[-1])
        assert (
            "- Current git status:  M app.py\n?? .claude/\n?? notes.txt\n" in sent and "single git commit. tidy" in sent
        )

        await run_prompt(pilot, "/release-notes 2.1")
        sent = user_message(server.requests[-1])
        assert sent.startswith('<command name="release-notes">\nBase directory for this skill: ')
        assert "Write the release notes for version 2.1 from `git log`." in sent
        assert [u.text for u in app.chat.query(UserMessage)] == ["/commit tidy", "/release-notes 2.1"]
