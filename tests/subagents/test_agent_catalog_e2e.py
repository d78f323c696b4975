"""A Claude Code user's agent collection as it is (issue 45, item 4), through a real Runtime and
litellm against the fake server, checked in what the model receives.

Each agent's description reaches the model whole (Claude Code lists them whole); a 200-agent
collection with 400-character descriptions overflows the listing's budget and every agent stays
reachable (named in the list, the count said, found by `query`, run by its exact name); `model:
haiku` and `model: inherit` on an OpenAI parent run on the parent's model (the first with a
note), never a failing child; an agent added between two turns is in the second request.
"""

from __future__ import annotations

from agent.runtime.ops import Prompt
from agent.turn.events import Notice
from tests.fakes.llm_server import text, tool_calls
from tests.subagents.test_subagent_e2e import _in

COLLECTION = 200
AREAS = ("backend", "frontend", "security", "data", "devops", "mobile", "ml", "docs")


def _description(i: int) -> str:
    """400 characters, the way large public collections write them (with an example)."""
    area = AREAS[i % len(AREAS)]
    head = (
        f"Use this agent when the user needs {area} expertise (specialist {i:03d}, trigger zq{i:03d}marker): "
        f"reviewing {area} changes, planning {area} work, debugging {area} failures. Examples: <example>user: "
        f"'the {area} build broke' assistant: 'I will use the {area} specialist.'</example> "
    )
    tail = f"Use PROACTIVELY after {area} changes, and before a {area} release is tagged or deployed. " * 4
    return " ".join((head + tail).split())[:399].rstrip() + "."


def _definition(name: str, description: str, body: str, model: str | None = None) -> str:
    model_line = f"model: {model}\n" if model else ""
    return f"---\nname: {name}\ndescription: {description}\ntools: Read, Grep, Glob\n{model_line}---\n{body}\n"


def _tools(request: dict) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in request.get("tools", [])}


async def test_200_agents_each_described_whole_or_named_and_any_runs_by_name(server, open_runtime, _isolated_home):
    folder = _isolated_home / "agents"
    folder.mkdir()
    names = [f"{AREAS[i % len(AREAS)]}-specialist-{i:03d}" for i in range(COLLECTION)]
    for i, name in enumerate(names):
        (folder / f"{name}.md").write_text(
            _definition(name, _description(i), f"You are specialist {i:03d}. BODY_{i:03d}")
        )
    listed = sorted(names)
    last = listed[-1]
    index = names.index(last)
    prompt = "the last specialist, please"
    task = "Review the change and report."
    server.add(
        _in(prompt, tool_calls([("q1", "subagent", {"query": f"zq{index:03d}marker"})])),
        _in(prompt, tool_calls([("s1", "subagent", {"agent": last, "task": task})])),
        _in(task, text("Reviewed: fine.")),
        _in(prompt, text("It is fine.")),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(prompt))
    finally:
        await runtime.close()
    first, searched, child, after = server.requests
    listing = _tools(first)["subagent"]
    lines = listing.splitlines()
    described = [n for n in listed if f"- {n}: {_description(names.index(n))}" in lines]  # whole, not cut
    named_line = next(line for line in lines if line.startswith("Also available (name only): "))
    named = named_line.removeprefix("Also available (name only): ").split(", ")
    assert "- explore: " in listing and "- general: " in listing  # the built-in ones first
    assert 20 < len(described) < COLLECTION and described + named == listed  # every one, in order
    assert lines[-1].startswith(
        f"({len(described) + 2} of the {COLLECTION + 2} agents are described above, {len(named)} more are named only: "
    )
    assert "`query`" in lines[-1] and "exact name" in lines[-1]
    assert last in named and _description(index) not in listing
    found = searched["messages"][-1]
    assert found["tool_call_id"] == "q1" and f"- {last}: {_description(index)}" in found["content"]
    assert f"BODY_{index:03d}" in child["messages"][0]["content"]  # the unlisted agent's own prompt
    assert after["messages"][-1]["content"] == "Reviewed: fine."


async def test_a_long_description_with_its_do_not_clause_reaches_the_model_whole(server, open_runtime, workspace):
    clause = "Do NOT use for frontend styling or documentation edits."
    description = (
        ("Reviews database migrations for locking, backfills and rollback safety. " * 14)[
            : 1400 - len(clause) - 1
        ].rstrip()
        + " "
        + clause
    )
    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "migration-reviewer.md").write_text(_definition("migration-reviewer", description, "Review it."))
    server.add(text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hello"))
    finally:
        await runtime.close()
    assert f"- migration-reviewer: {description}\n" in _tools(server.requests[0])["subagent"] + "\n"


async def test_haiku_and_inherit_on_an_openai_parent_run_on_the_parents_model(server, open_runtime, _isolated_home):
    folder = _isolated_home / "agents"
    folder.mkdir()
    (folder / "quick.md").write_text(_definition("quick", "Answers quick questions.", "Be quick. QUICK_BODY", "haiku"))
    (folder / "same.md").write_text(_definition("same", "Same model as you.", "Be thorough. SAME_BODY", "inherit"))
    prompt = "ask both"
    server.add(
        _in(prompt, tool_calls([("a", "subagent", {"agent": "quick", "task": "quick task"})])),
        _in("quick task", text("quick answer")),
        _in(prompt, tool_calls([("b", "subagent", {"agent": "same", "task": "same task"})])),
        _in("same task", text("same answer")),
        _in(prompt, text("done")),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(prompt))
    finally:
        await runtime.close()
    quick, same = server.requests[1], server.requests[3]
    assert "QUICK_BODY" in quick["messages"][0]["content"] and "SAME_BODY" in same["messages"][0]["content"]
    assert quick["model"] == same["model"] == server.requests[0]["model"] == "fake-model"
    assert server.requests[2]["messages"][-1]["content"] == "quick answer"  # the child did not fail
    assert server.requests[4]["messages"][-1]["content"] == "same answer"
    notes = [e.message for e in runtime.events if isinstance(e, Notice) and "agent runs on" in e.message]
    assert notes == [
        "The quick agent runs on openai/fake-model: `haiku` is a Claude model family and "
        "openai/fake-model is not a Claude model."
    ]


async def test_an_agent_added_between_two_turns_is_in_the_second_request(server, open_runtime, workspace):
    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(_definition("reviewer", "Reviews code.", "Review."))
    server.add(text("one"), text("two"), text("three"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("first"))
        (folder / "tester.md").write_text(_definition("tester", "Writes the missing tests.", "Test."))
        assert "tester" in {d.name for d in runtime.agent_definitions()}  # /agents lists what is there now
        await runtime.submit(Prompt("second"))
        await runtime.submit(Prompt("third"))
    finally:
        await runtime.close()
    first, second, third = (_tools(r)["subagent"] for r in server.requests)
    assert "- reviewer: Reviews code." in first and "tester" not in first
    assert "- tester: Writes the missing tests." in second
    assert third == second  # nothing changed on disk: the cached prefix stays as it was
