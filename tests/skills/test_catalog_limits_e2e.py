"""A Claude Code user's skill collection as it is (issue 45, item 4), through a real Runtime and
litellm against the fake server, checked in what the model receives.

Claude Code lists each skill's `description` + `when_to_use` up to 1,536 characters, and past its
listing budget keeps every name. Here: a description of 1,400 characters written for Claude Code
reaches the model whole, its closing "Do NOT use for …" clause included; a 181-skill collection
with long descriptions overflows the catalog, and every skill stays reachable (described or
named in the list, the count said, found by skill-load's `query`, loaded by its exact name); a skill folder added
between two turns is in the second request, and the catalog text does not change while nothing
on disk does.
"""

from __future__ import annotations

import json

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.skills.helpers import write_skill

COLLECTION = 181
TOPICS = ("terraform", "kubernetes", "postgres", "react", "django", "rust", "kafka", "graphql", "redis", "swift")


def _tools(request: dict) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in request.get("tools", [])}


def _long_description(i: int) -> str:
    """About 700 characters, the way large public collections write them: what, when, triggers."""
    topic = TOPICS[i % len(TOPICS)]
    text = (
        f"Expert guidance for {topic} work in production codebases (pack {i:03d}): designing, reviewing and "
        f"refactoring {topic} code, diagnosing failures from logs and stack traces, and writing tests that pin "
        f"the behaviour down. Use when the user mentions {topic}, asks to migrate or upgrade a {topic} setup, "
        f"wants a code review of {topic} changes, or hits an error message that names {topic}. Covers "
        f"configuration, performance tuning, security hardening, observability and deployment checklists. "
        f"Unique trigger: qz{i:03d}marker. Do NOT use for unrelated languages or for general questions."
    )
    return text


async def test_a_1400_character_description_reaches_the_model_whole(server, open_runtime, workspace):
    clause = "Do NOT use for spreadsheets, slide decks or anything that is not a PDF file."
    filler = "Extracts text and tables from PDF files, fills PDF forms, merges and splits documents. " * 20
    description = (filler[: 1400 - len(clause) - 1] + " " + clause).replace("  ", " ")
    assert 1390 <= len(description) <= 1400
    folder = workspace / ".claude" / "skills" / "pdf"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: pdf\ndescription: {description}\n---\n\n# PDF\nBODY\n")
    server.add(text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("summarise report.pdf"))
    finally:
        await runtime.close()
    catalog = _tools(server.requests[0])["skill-load"]
    assert f"- pdf: {description}\n" in catalog + "\n"
    assert catalog.split("- pdf: ", 1)[1].startswith(description) and clause in catalog


async def test_181_long_skills_overflow_the_catalog_and_every_one_stays_reachable(server, open_runtime, _isolated_home):
    root = _isolated_home / "skills"
    names = [f"{TOPICS[i % len(TOPICS)]}-pack-{i:03d}" for i in range(COLLECTION)]
    for i, name in enumerate(names):
        write_skill(root, name, _long_description(i), f"# {name}\nBODY_{i:03d}_MARK\n")
    listed = sorted(names)  # the catalog's order
    last = listed[-1]  # past the described part
    index = names.index(last)
    server.add(
        tool_calls([("q1", "skill-load", {"query": f"qz{index:03d}marker"})]),
        tool_calls([("k1", "skill-load", {"name": last})]),
        text("Following it."),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("the last pack, please"))
    finally:
        await runtime.close()
    first, searched, loaded = server.requests
    catalog = _tools(first)["skill-load"]
    lines = catalog.splitlines()
    described = [n for n in listed if f"- {n}: {_long_description(names.index(n))}" in lines]
    named_line = next(line for line in lines if line.startswith("Also available (name only): "))
    named = named_line.removeprefix("Also available (name only): ").split(", ")
    assert 10 < len(described) < COLLECTION and described + named == listed  # every one in the list, in order
    assert last in named and _long_description(index) not in catalog
    assert lines[-1].startswith(
        f"({len(described)} of the {COLLECTION} skills are described above, {len(named)} more are named only: "
    )
    assert "`query`" in lines[-1] and "exact name" in lines[-1]
    assert len(catalog) < 16_000 + 1_000  # the budget, plus the tool's own text and the closing line
    search_result = searched["messages"][-1]
    assert search_result["tool_call_id"] == "q1"
    assert f"- {last}: {_long_description(index)}" in search_result["content"]
    load_result = loaded["messages"][-1]["content"]
    assert load_result.startswith(f"Base directory for this skill: {(root / last).resolve()}")
    assert json.dumps(loaded).count(f"BODY_{index:03d}_MARK") == 1
    assert _tools(loaded)["skill-load"] == catalog


async def test_a_skill_added_between_two_turns_is_in_the_second_request(server, open_runtime, workspace):
    root = workspace / ".claude" / "skills"
    write_skill(root, "api-style", "Our API conventions.", "api body")
    server.add(text("one"), text("two"), text("three"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("first"))
        write_skill(root, "release", "How we cut a release. Use when the user says ship it.", "release body")
        assert "release" in runtime.skills().skills  # /skills lists what is there now
        await runtime.submit(Prompt("second"))
        await runtime.submit(Prompt("third"))
    finally:
        await runtime.close()
    first, second, third = (_tools(r)["skill-load"] for r in server.requests)
    assert "- api-style: Our API conventions." in first and "release" not in first
    assert "- release: How we cut a release. Use when the user says ship it." in second
    assert third == second  # nothing changed on disk: the cached prefix stays as it was


async def test_the_first_skill_added_while_running_brings_the_tool(server, open_runtime, _isolated_home):
    server.add(text("one"), text("two"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("first"))
        write_skill(_isolated_home / "skills", "notes", "How we take notes.", "notes body")
        await runtime.submit(Prompt("second"))
    finally:
        await runtime.close()
    assert "skill-load" not in _tools(server.requests[0])
    assert "- notes: How we take notes." in _tools(server.requests[1])["skill-load"]


async def test_a_skill_only_the_user_invokes_is_not_offered_to_the_model(server, open_runtime, workspace):
    """Claude Code's `disable-model-invocation: true`: the user's `/name` only."""
    root = workspace / ".claude" / "skills"
    write_skill(root, "api-style", "Our API conventions.", "api body")
    (root / "deploy").mkdir()
    (root / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploys to production.\ndisable-model-invocation: true\n---\nDEPLOY_BODY\n"
    )
    server.add(tool_calls([("k1", "skill-load", {"name": "deploy"})]), text("I cannot."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("deploy it"))
        assert "deploy" in runtime.skills().skills  # still the user's `/deploy`
    finally:
        await runtime.close()
    first, second = server.requests
    assert "deploy" not in _tools(first)["skill-load"] and "- api-style: " in _tools(first)["skill-load"]
    result = second["messages"][-1]["content"]
    assert result.startswith("Error: the skill deploy is invoked only by the user (/deploy)")
    assert "DEPLOY_BODY" not in json.dumps(server.requests)
