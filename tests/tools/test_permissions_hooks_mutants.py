"""A PreToolUse hook's permission decision in `Permissions` (agent/tools/permissions.py), and the
`CallRecord` the registry fills in: pinned so that each mutant of that code fails a test.

A hook's "allow" runs the call unasked, as a rule would (the same sandbox, git's ceiling), but
never a protected target; its "ask" asks even where `--yolo`, accept-edits or a rule would not.
Plan mode refuses whatever the hook says. The sandbox is a real `Sandbox` whose "bubblewrap" is
`/bin/true`, as in test_permissions_mutants.py and test_permission_modes.py.
"""

from __future__ import annotations

from agent.tools.permissions import ApprovalRequest, CallRecord, CommandVerdict, Permissions, current_call
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover


def perms(workspace, approver=None, *, works=True, **kw) -> Permissions:
    box = Sandbox(workspace, bwrap="/bin/true" if works else "/bin/false")
    box.probe()
    kw.setdefault("allow_commands", [])
    return Permissions(approver, workspace=workspace, sandbox=box, **kw)


def command(text: str) -> ApprovalRequest:
    return ApprovalRequest(
        tool="terminal-execute", kind="command", title="Run command", detail=text, key=f"command:{text}"
    )


def edit(path: str = "a.py") -> ApprovalRequest:
    return ApprovalRequest(tool="filesystem-edit", kind="edit", title=f"Edit {path}", key="edit", path=path)


async def decide(p: Permissions, request: ApprovalRequest, hook: str | None) -> tuple[CommandVerdict, dict]:
    """The check as the registry makes it: inside a call whose hooks answered `hook`."""
    record = CallRecord(request.tool, call_id="call-1")
    record.hook_permission = hook
    token = current_call.set(record)
    try:
        result = await p.check_command(request)
    finally:
        current_call.reset(token)
    [checked] = record.checks
    return result, checked


# -- the call record ----------------------------------------------------------------------------


def test_a_call_record_keeps_the_models_call_id_and_starts_without_a_hook_decision():
    record = CallRecord("subagent", "a.py", call_id="toolu_01")
    assert (record.tool, record.path, record.call_id) == ("subagent", "a.py", "toolu_01")
    assert record.checks == []
    assert record.hook_permission is None  # None: the hooks said nothing


def test_a_call_record_made_without_an_id_has_none():
    # agent/subagents/tool.py names a child session by the id only when there is one.
    assert CallRecord("subagent").call_id == ""


# -- a hook's "allow" -------------------------------------------------------------------------


async def test_hook_allow_runs_a_command_unasked_in_the_workspace_write_sandbox(workspace):
    approver = FakeApprover("deny")
    result, record = await decide(perms(workspace, approver), command("touch x"), "allow")
    assert result == CommandVerdict(allowed=True, decision="hook", sandbox="workspace-write")
    assert record["decision"] == "hook" and record["allowed"] is True
    assert record["sandbox"] == "workspace-write" and "rule" not in record
    assert approver.requests == []


async def test_hook_allow_runs_unconfined_when_rules_are_off(workspace):
    class Off:
        rules, approved, hide = "off", "workspace-write", []

    p = perms(workspace, FakeApprover("deny"), sandbox_settings=Off())
    result, _ = await decide(p, command("touch x"), "allow")
    assert result == CommandVerdict(allowed=True, decision="hook", sandbox=None)


async def test_hook_allowed_git_stops_at_the_workspace_like_a_rules(workspace):
    approver = FakeApprover("deny")
    result, record = await decide(perms(workspace, approver), command("git status"), "allow")
    assert result == CommandVerdict(
        allowed=True, decision="hook", sandbox="workspace-write", harden_git=True, git_ceiling=True
    )
    assert record["decision"] == "hook"
    assert approver.requests == []


async def test_hook_allow_without_a_hook_would_have_asked(workspace):
    # The same command and approver, no hook: asked and denied (so the hook is what let it run).
    approver = FakeApprover("deny")
    result, record = await decide(perms(workspace, approver), command("touch x"), None)
    assert result == CommandVerdict(allowed=False, decision="deny")
    assert record["decision"] == "deny" and len(approver.requests) == 1


async def test_hook_allow_never_covers_a_protected_target(workspace):
    approver = FakeApprover("deny")
    p = perms(workspace, approver)
    for request in (edit(".env"), command("eval touch x")):
        result, record = await decide(p, request, "allow")
        assert result.allowed is False and result.decision == "deny"
        assert record["decision"] == "deny" and record["protected"]
    assert len(approver.requests) == 2
    assert all(r.choices == ["once", "deny"] for r in approver.requests)


async def test_hook_allow_of_a_protected_target_with_nobody_to_ask_is_refused(workspace):
    result, record = await decide(perms(workspace, None), edit(".env"), "allow")
    assert result == CommandVerdict(allowed=False, decision="refused")
    assert record["decision"] == "refused"


async def test_plan_mode_refuses_what_a_hook_allows(workspace):
    approver = FakeApprover("once")
    p = perms(workspace, approver, mode="plan")
    for request in (command("touch x"), edit()):
        result, record = await decide(p, request, "allow")
        assert result == CommandVerdict(allowed=False, decision="plan")
        assert record["decision"] == "plan" and record["allowed"] is False
    assert approver.requests == []


# -- a hook's "ask" ----------------------------------------------------------------------------


async def test_hook_ask_asks_even_under_yolo(workspace):
    approver = FakeApprover("deny")
    result, record = await decide(perms(workspace, approver, yolo=True), command("touch x"), "ask")
    assert result == CommandVerdict(allowed=False, decision="deny")
    assert record["decision"] == "deny"
    assert [r.detail for r in approver.requests] == ["touch x"]


async def test_hook_ask_under_yolo_with_nobody_to_ask_is_refused(workspace):
    result, record = await decide(perms(workspace, None, yolo=True), command("touch x"), "ask")
    assert result == CommandVerdict(allowed=False, decision="refused")
    assert record["decision"] == "refused"


async def test_hook_ask_asks_even_in_accept_edits(workspace):
    approver = FakeApprover("once")
    result, record = await decide(perms(workspace, approver, mode="acceptEdits"), edit(), "ask")
    assert result == CommandVerdict(allowed=True, decision="once")
    assert record["decision"] == "once" and len(approver.requests) == 1


async def test_hook_ask_asks_even_where_a_rule_covers_the_command(workspace):
    approver = FakeApprover("deny")
    p = perms(workspace, approver, allow_commands=["touch"])
    p.always.add("command:ls")
    for text in ("touch x", "ls"):
        result, record = await decide(p, command(text), "ask")
        assert result == CommandVerdict(allowed=False, decision="deny")
        assert record["decision"] == "deny" and "rule" not in record
    assert [r.detail for r in approver.requests] == ["touch x", "ls"]


async def test_the_same_rule_runs_it_unasked_when_no_hook_asks(workspace):
    approver = FakeApprover("deny")
    p = perms(workspace, approver, allow_commands=["touch"])
    result, record = await decide(p, command("touch x"), None)
    assert result == CommandVerdict(allowed=True, decision="rule", sandbox="workspace-write")
    assert record["rule"] == "allow_commands:touch" and approver.requests == []


# -- no tool call running ---------------------------------------------------------------------


async def test_a_check_outside_any_tool_call_has_no_hook_decision(workspace):
    assert current_call.get() is None
    approver = FakeApprover("deny")
    p = perms(workspace, approver, yolo=True)
    assert await p.check_command(command("touch x")) == CommandVerdict(allowed=True, decision="yolo")
    p = perms(workspace, approver)
    assert await p.check_command(command("touch x")) == CommandVerdict(allowed=False, decision="deny")
    assert len(approver.requests) == 1
