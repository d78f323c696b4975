"""Issue 46 item 7 (walk 8): a skill, an agent or a command file added while cairn runs is
found without a restart: `/skills` and `/agents` list it, the `/` popup offers it, `/name`
runs it, and after `/clear` too (the folders are looked at again each time, not cached)."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from tests.fakes.llm_server import text
from tests.skills.helpers import write_skill
from tests.ui.conftest import run_prompt, wait_ready

SIZE = (80, 24)
AGENT = """---
name: changelog-writer
description: Writes the changelog entry for a change
---
You write changelog entries.
"""
COMMAND = """---
description: Summarise the open TODOs
---
List every TODO in the code and say which matters most.
"""


def _last_help(app) -> str:
    return " ".join([n.text for n in app.chat.query(Notice) if n.kind == "help"][-1].split())


async def test_added_skills_agents_and_commands_are_found_without_a_restart(
    make_settings, server, workspace, _isolated_home
):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/skills")
        assert "No skills found" in _last_help(app)

        # Added now, while cairn runs: the user's and the project's.
        write_skill(_isolated_home / "skills", "release-notes", "Write release notes.", "body")
        write_skill(workspace / ".claude" / "skills", "changelog", "Keep the changelog.", "body")
        (_isolated_home / "agents").mkdir()
        (_isolated_home / "agents" / "changelog-writer.md").write_text(AGENT)
        (workspace / ".claude" / "commands").mkdir(parents=True)
        (workspace / ".claude" / "commands" / "todos.md").write_text(COMMAND)

        await run_prompt(pilot, "/skills")
        listed = _last_help(app)
        assert "release-notes [user:" in listed and "changelog [project: .claude/skills/changelog]" in listed
        await run_prompt(pilot, "/agents")
        assert "changelog-writer [user]: Writes the changelog entry" in _last_help(app)

        app.prompt.insert("/tod")
        await pilot.pause()
        popup = app.query_one("#slash-popup")
        assert [popup.get_option_at_index(i).id for i in range(popup.option_count)] == ["todos"]
        app.prompt.clear()
        await pilot.pause()

        server.add(text("Two TODOs; the parser one matters."))
        await run_prompt(pilot, "/todos")
        sent = server.requests[-1]["messages"][-1]["content"]
        assert "List every TODO in the code" in str(sent)

        await run_prompt(pilot, "/clear")
        write_skill(workspace / ".claude" / "skills", "after-clear", "Found after /clear.", "body")
        await run_prompt(pilot, "/skills")
        assert "after-clear [project:" in _last_help(app)

        write_skill(workspace / ".claude" / "skills", "fresh", "Just written.", "FRESH_SKILL_BODY_7q")
        server.add(text("Done."))
        await run_prompt(pilot, "/fresh")  # run by name before any turn looked at the folders again
        assert "FRESH_SKILL_BODY_7q" in str(server.requests[-1]["messages"][-1]["content"])
