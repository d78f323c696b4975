"""`/effort` is the session's choice (issue 44 moved it off `Settings`): it reaches every request
of the session, a subagent's included, survives `/clear`, and `default` goes back to `--effort`."""

from __future__ import annotations

from agent.runtime.ops import NewSession, Prompt, SetEffort
from tests.fakes.llm_server import text, tool_calls

PARENT = "look around"
TASK = "list the files"
REASONING = {"model": "openai/gpt-5.1"}  # litellm's price map lists it as reasoning: the effort is sent


async def test_effort_reaches_the_child_and_survives_a_new_session(server, open_runtime):
    server.add(
        tool_calls([("s1", "subagent", {"agent": "explore", "task": TASK})]),
        text("nothing there"),
        text("done"),
        text("after clear"),
    )
    runtime = await open_runtime(flags=REASONING)
    try:
        await runtime.submit(SetEffort("high"))
        await runtime.submit(Prompt(PARENT))
        await runtime.submit(NewSession())
        await runtime.submit(Prompt("again"))
    finally:
        await runtime.close()
    firsts = [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in server.requests]
    assert firsts == [PARENT, TASK, PARENT, "again"]  # the child's request is the second
    assert [r.get("reasoning_effort") for r in server.requests] == ["high"] * 4


async def test_default_goes_back_to_the_launch_effort(server, open_runtime):
    server.add(text("one"), text("two"))
    runtime = await open_runtime(flags={**REASONING, "effort": "low"})
    try:
        await runtime.submit(SetEffort("high"))
        assert runtime.effort() == "high" and runtime.chosen_effort == "high"
        await runtime.submit(Prompt("first"))
        await runtime.submit(SetEffort(None))
        assert runtime.effort() == "low" and runtime.chosen_effort is None
        await runtime.submit(Prompt("second"))
    finally:
        await runtime.close()
    assert [r.get("reasoning_effort") for r in server.requests] == ["high", "low"]
