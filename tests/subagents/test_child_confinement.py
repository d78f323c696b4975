"""A subagent is a narrower parent, never a wider one (issue 43, class 4): its tools, its
permission mode and the run's limits, in this process against the scripted server (the
headless flags end to end are tests/headless/test_child_limits.py)."""

from __future__ import annotations

import threading

from agent.headless.limits import RunGuard, RunLimits, parse_tool_rules
from agent.runtime.ops import Prompt
from agent.session.models import ToolCall
from agent.settings.config import load_settings
from agent.subagents.definitions import AgentDefinition
from agent.tools.permissions import ApprovalRequest, Permissions
from agent.tools.registry import default_registry
from agent.turn.children import ChildPermissions, child_tools
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type
from tests.subagents.test_subagent_e2e import PARENT, _first_user, _in

KNOWN = [*default_registry().names, "subagent"]


def _guard(workspace, **flags) -> RunGuard:
    """The guard `cairn -p` builds from its flags (agent/cli.py, agent/headless/run.py)."""
    rules = {k: parse_tool_rules(v, KNOWN) for k, v in flags.items() if k in ("allowed", "disallowed")}
    limits = {k: v for k, v in flags.items() if k not in rules}
    return RunGuard(RunLimits(**limits, **rules), workspace)


def test_child_tools_are_the_intersection_of_the_run_the_parent_and_the_definition(workspace):
    parents = default_registry().tools()
    guard = _guard(workspace, disallowed="terminal-execute, filesystem-edit")
    wide = AgentDefinition(name="w", description="d", tools=["terminal-execute", "filesystem-read", "mcp__x__y"])
    assert [t.name for t in child_tools(parents, wide, guard.offered)] == ["filesystem-read"]
    every = {t.name for t in child_tools(parents, AgentDefinition(name="g", description="d"), guard.offered)}
    assert every and not every & {"terminal-execute", "filesystem-edit", "exit-plan-mode", "subagent"}
    allowed = _guard(workspace, allowed="filesystem-read, filesystem-find, subagent")
    assert [t.name for t in child_tools(parents, wide, allowed.offered)] == ["filesystem-read"]
    assert {t.name for t in child_tools(parents, AgentDefinition(name="g", description="d"))} == set(
        default_registry().names
    ) - {"exit-plan-mode"}


def test_a_childs_guard_counts_into_the_runs_and_one_limit_stops_everyone(workspace):
    run = _guard(workspace, max_turns=3, max_cost=1.0)
    one, two = run.for_child("explore"), run.for_child("general")
    assert run.before_request(5.0) is None  # a resumed session: its earlier cost is not this run's
    run.after_request(5.1)
    assert one.before_request(0.0) is None and two.before_request(0.0) is None
    one.after_request(0.5)
    run.after_request(7.0)  # a request never sent by the parent since: nothing charged
    assert (run.requests, round(run.run_cost, 6)) == (3, 0.6)
    two.after_request(0.5)
    reached = one.before_request(0.5)
    assert (
        reached is not None and reached.limit == "max_turns" and "the explore agent wanted to go on" in reached.message
    )
    assert run.before_request(5.1) == reached == two.before_request(0.5)  # sticky, for all
    assert run.before_tool(ToolCall(id="c", name="filesystem-read", arguments="{}")) == reached
    assert run.exit_code == 3

    tools = _guard(workspace, disallowed="terminal-execute(git push)")
    child = tools.for_child("general")
    call = ToolCall(id="t9", name="terminal-execute", arguments='{"command": "ls && git push"}')
    stopped = child.before_tool(call)
    assert stopped is not None and stopped.tool_call_id == "t9"  # the child's own record names its call
    assert "the general agent's command `ls && git push` matches --disallowed-tools" in stopped.message
    assert tools.reached is not None and tools.reached.tool_call_id is None  # not a call of the parent's


async def test_a_child_follows_its_parents_mode_and_is_never_wider(workspace):
    (workspace / "a.txt").write_text("a\n")
    settings = load_settings(workspace, flags={"model": "openai/x", "permission_mode": "acceptEdits"})
    parent = Permissions.from_settings(settings)
    child = ChildPermissions.tied(settings, None, parent, plan_only=False)
    edit = ApprovalRequest(
        tool="filesystem-edit", kind="edit", key="edit", title="Edit a.txt", path=str(workspace / "a.txt")
    )
    assert await child.check(edit)  # acceptEdits, as the parent
    parent.mode = "plan"  # Shift+Tab while the child runs
    assert child.mode == "plan" and not await child.check(edit)
    parent.mode = "default"
    assert not await child.check(edit)  # nobody to ask: refused, as the parent would be
    parent.mode = "acceptEdits"
    child.mode = "plan"  # a child may narrow itself…
    child.mode = "acceptEdits"  # …never widen again
    assert child.mode == "plan" and not await child.check(edit)
    reader = ChildPermissions.tied(settings, None, parent, plan_only=True)
    assert reader.mode == "plan" and reader.always is not parent.always
    yolo = load_settings(workspace, flags={"model": "openai/x", "yolo": True})
    assert not ChildPermissions.tied(yolo, None, parent, plan_only=False).yolo  # the parent's is not


async def test_allowed_tools_reach_the_child(server, open_runtime, workspace):
    task = "look around"
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "general", "task": task})])),
        _in(task, text("looked")),
        _in(PARENT, text("done")),
    )
    runtime = await open_runtime(yolo=True)
    runtime.agent.guard = _guard(workspace, allowed="filesystem-read, subagent")
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["filesystem-read", "subagent"]
    assert [t["function"]["name"] for t in server.requests[1]["tools"]] == ["filesystem-read"]
    assert runtime.agent.guard.requests == 3


async def test_a_disallowed_command_prefix_stops_the_child_and_the_run_under_yolo(server, open_runtime, workspace):
    task = "make the file"
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "general", "task": task})])),
        _in(task, tool_calls([("t1", "terminal-execute", {"command": "echo hi; touch pwned.txt"})])),
    )
    runtime = await open_runtime(yolo=True)
    runtime.agent.guard = _guard(workspace, disallowed="terminal-execute(touch)")
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    assert not (workspace / "pwned.txt").exists()
    limits = of_type(runtime.events, "limit_reached")
    assert len(limits) == 1 and limits[0].limit == "tool_disallowed" and limits[0].tool_call_id is None
    assert "the general agent's command `echo hi; touch pwned.txt`" in limits[0].message
    assert of_type(runtime.events, "turn_finished")[-1].status == "limit"
    result = of_type(runtime.events, "tool_finished")[-1].message
    assert result.tool_call_id == "s1" and result.status == "error" and "did not finish: Stopped:" in result.content


async def test_siblings_running_together_share_max_turns(server, open_runtime, workspace):
    """Two children at once under --max-turns 3: the parent's request and one each; both
    want another, neither gets it, and the run stops (the script has no fourth step)."""
    (workspace / "a.txt").write_text("a\n")
    both_asked = threading.Barrier(2, timeout=30)

    def child_step(request: dict):
        assert _first_user(request) in ("task A", "task B")
        both_asked.wait()  # both children are running before either gets its answer
        return tool_calls([(f"r-{_first_user(request)[-1]}", "filesystem-read", {"filePath": "a.txt"})])

    server.add(
        _in(
            PARENT,
            tool_calls(
                [
                    ("s1", "subagent", {"agent": "explore", "task": "task A"}),
                    ("s2", "subagent", {"agent": "explore", "task": "task B"}),
                ]
            ),
        ),
        child_step,
        child_step,
    )
    runtime = await open_runtime()
    runtime.agent.guard = _guard(workspace, max_turns=3)
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    assert len(server.requests) == 3 and runtime.agent.guard.requests == 3
    results = [e.message for e in of_type(runtime.events, "tool_finished")]
    assert sorted(m.tool_call_id for m in results) == ["s1", "s2"]
    assert all(m.status == "error" and "--max-turns 3" in m.content for m in results)
    assert [e.limit for e in of_type(runtime.events, "limit_reached")] == ["max_turns"]
