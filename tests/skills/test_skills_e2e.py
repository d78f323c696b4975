"""Skills end to end (issue 30): litellm ↔ the fake server, real tools, a real SQLite file.

Forty skills cost the request one catalog line each; a body enters the conversation only
when the model loads it, exactly once, and stays for the session. A Claude Code project's
`.claude/skills/` works as it is, and a skill's files are read with filesystem-read.
"""

from __future__ import annotations

import json

import pytest

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.skills.helpers import CLAUDE_CODE_SKILL, marker, write_many, write_skill

COUNT = 40
LOADED = 7


def _tools(request: dict) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in request.get("tools", [])}


@pytest.mark.parametrize("where", ["user", "project"])
async def test_forty_skills_cost_a_catalog_and_a_body_arrives_once_when_loaded(
    server, open_runtime, workspace, _isolated_home, where
):
    root = _isolated_home / "skills" if where == "user" else workspace / ".claude" / "skills"
    names = write_many(root, COUNT)
    server.add(
        tool_calls([("k1", "skill-load", {"name": names[LOADED]})]),
        text("Loaded; following it."),
        text("Still following it."),
    )
    runtime = await open_runtime(yolo=False)
    try:
        await runtime.submit(Prompt("do the task the skill-07 way"))
        await runtime.submit(Prompt("and again"))
    finally:
        await runtime.close()

    first, after_load, next_turn = server.requests
    catalog = _tools(first)["skill-load"]
    for i, name in enumerate(names):
        assert f"- {name}: Use for task kind {i:02d} (the {name} conventions)." in catalog
    assert "more skill" not in catalog  # forty fit under the cap
    assert "BODY_MARKER_" not in json.dumps(first)  # no body before a load
    for request in (after_load, next_turn):  # loaded once, then it stays
        sent = json.dumps(request)
        assert sent.count(marker(LOADED)) == 1
        assert sent.count("BODY_MARKER_") == 1  # and no other skill's body
        assert _tools(request)["skill-load"] == catalog  # the prefix does not change
    result = next(m for m in after_load["messages"] if m["role"] == "tool")
    assert result["tool_call_id"] == "k1"
    folder = (root / names[LOADED]).resolve() if where == "user" else root / names[LOADED]
    assert result["content"].startswith(f"Base directory for this skill: {folder}\n\n# {names[LOADED]}\n")


async def test_no_skills_no_tool(server, open_runtime):
    server.add(text("hi"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hello"))
        assert runtime.skills().skills == {}
    finally:
        await runtime.close()
    assert "skill-load" not in _tools(server.requests[0])


async def test_a_claude_code_projects_skill_works_unchanged(server, open_runtime, workspace):
    folder = workspace / ".claude" / "skills" / "webapp-testing"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(CLAUDE_CODE_SKILL)
    (folder / "scripts" / "with_server.py").write_text("HELPER_SCRIPT_MARKER = 1\n")
    server.add(
        tool_calls([("k1", "skill-load", {"name": "webapp-testing"})]),
        tool_calls([("r1", "filesystem-read", {"filePath": str(folder / "scripts" / "with_server.py")})]),
        text("I will run scripts/with_server.py --help first."),
    )
    runtime = await open_runtime(yolo=False)  # nobody to approve: nothing here may need it
    try:
        await runtime.submit(Prompt("test the login page of my web app"))
    finally:
        await runtime.close()
    first, loaded, read = server.requests
    catalog = _tools(first)["skill-load"]
    assert "- webapp-testing: Toolkit for interacting with and testing local web applications" in catalog
    assert "CLAUDE_CODE_MARKER_7f3a" not in json.dumps(first)
    result = loaded["messages"][-1]["content"]
    assert result.startswith(f"Base directory for this skill: {folder}\n\n# Web Application Testing\n")
    assert json.dumps(loaded).count("CLAUDE_CODE_MARKER_7f3a") == 1
    assert "- scripts/with_server.py" in result and "license:" not in result
    assert "HELPER_SCRIPT_MARKER = 1" in read["messages"][-1]["content"]


async def test_a_symlinked_skill_md_pointing_out_is_never_read(server, open_runtime, workspace, tmp_path):
    outside = tmp_path / "outside"
    write_skill(outside, "leak", "LEAKED_DESCRIPTION", "LEAKED_BODY")
    write_skill(workspace / ".claude" / "skills", "fine", "A fine skill.", "fine body")
    (workspace / ".claude" / "skills" / "leak").mkdir()
    (workspace / ".claude" / "skills" / "leak" / "SKILL.md").symlink_to(outside / "leak" / "SKILL.md")
    server.add(tool_calls([("k1", "skill-load", {"name": "leak"})]), text("No such skill."))
    runtime = await open_runtime(yolo=False)
    try:
        await runtime.submit(Prompt("use the leak skill"))
        notices = runtime.skills().notices
    finally:
        await runtime.close()
    assert any("leak/SKILL.md: it is a symlink" in n for n in notices)
    sent = json.dumps(server.requests)
    assert "LEAKED_" not in sent and "- fine: A fine skill." in sent
    assert "Error: no skill named 'leak'. Skills: fine" in sent
