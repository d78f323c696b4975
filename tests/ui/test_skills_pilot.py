"""`/skills` in the TUI: each skill with where it comes from and its description, the ones
skipped with why, and a hint of where skills go when there are none."""

from __future__ import annotations

from agent.ui.app import CairnApp
from tests.skills.helpers import write_skill
from tests.ui.conftest import chat_text, run_prompt, wait_ready

SIZE = (80, 24)


async def test_skills_lists_skills_sources_and_skipped_ones(make_settings, server, workspace, _isolated_home):
    write_skill(_isolated_home / "skills", "release", "How we cut a release.", "user body")
    write_skill(workspace / ".claude" / "skills", "api-style", "Our API conventions.", "project body")
    write_skill(workspace / ".claude" / "skills", "Bad_Name", "Skipped for its name.", "x")
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/skills")
        shown = " ".join(chat_text(app).split())
    assert "Skills the model can load" in shown
    assert "api-style [project: .claude/skills/api-style]: Our API conventions." in shown
    assert f"release [user: {(_isolated_home / 'skills' / 'release').resolve()}]: How we cut a release." in shown
    assert "Skipped:" in shown and "'Bad_Name' is not lowercase letters, digits and hyphens" in shown
    assert server.requests == []  # a listing, not a prompt


async def test_skills_without_any_says_where_they_go(make_settings, server, workspace, _isolated_home):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/skills")
        shown = " ".join(chat_text(app).split())
    assert "No skills found. A skill is a folder with a SKILL.md" in shown
    assert str(_isolated_home / "skills") in shown and "Skipped:" not in shown
