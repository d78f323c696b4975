"""The permission modes in the decision (agent/tools/permissions.py, agent/tools/modes.py): each
branch pinned on its own answer, and through the registry the text the model gets back.

Plan mode lets through only what reads, whatever `--yolo` or a rule says; accept-edits lets a
file edit in the workspace run unasked and nothing else. The sandbox is a real `Sandbox` whose
"bubblewrap" is `/bin/true` (available) or `/bin/false` (not), as in test_permissions_mutants.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.session.models import Message, ToolCall
from agent.tools.base import ToolContext
from agent.tools.modes import MODES, PLAN_REFUSAL, REMINDER_META, REMINDERS, is_mode, next_mode, user_meta
from agent.tools.permissions import ApprovalRequest, CallRecord, CommandVerdict, Permissions, current_call
from agent.tools.registry import default_registry
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover


def perms(workspace, approver=None, *, works=True, mode="default", **kw) -> Permissions:
    box = Sandbox(workspace, bwrap="/bin/true" if works else "/bin/false")
    box.probe()
    kw.setdefault("allow_commands", [])
    return Permissions(approver, workspace=workspace, sandbox=box, mode=mode, **kw)


def command(text: str, **kw) -> ApprovalRequest:
    return ApprovalRequest(
        tool="terminal-execute", kind="command", title="Run command", detail=text, key=f"command:{text}", **kw
    )


def edit(path: str = "a.py", **kw) -> ApprovalRequest:
    return ApprovalRequest(tool="filesystem-edit", kind="edit", title=f"Edit {path}", key="edit", **kw)


async def decide(p: Permissions, request: ApprovalRequest) -> tuple[CommandVerdict, dict]:
    record = CallRecord(request.tool)
    token = current_call.set(record)
    try:
        result = await p.check_command(request)
    finally:
        current_call.reset(token)
    [checked] = record.checks
    return result, checked


async def call(ctx, name, **args):
    return await default_registry().execute(ToolCall(id="c1", name=name, arguments=json.dumps(args)), ctx)


# -- plan mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize("yolo", [False, True])
async def test_plan_refuses_edits_and_writing_commands_whatever_yolo_says(workspace, yolo):
    approver = FakeApprover("once")
    p = perms(workspace, approver, mode="plan", yolo=yolo, allow_commands=["touch"], allow=["edit"])
    p.always.add("edit")
    for request in (edit(), command("touch x"), command("rm -rf build")):
        result, record = await decide(p, request)
        assert result == CommandVerdict(allowed=False, decision="plan")
        assert record["decision"] == "plan" and record["allowed"] is False and "rule" not in record
    assert approver.requests == []


@pytest.mark.parametrize("yolo", [False, True])
async def test_plan_runs_a_read_only_command_in_the_read_only_sandbox(workspace, yolo):
    approver = FakeApprover("deny")
    result, record = await decide(perms(workspace, approver, mode="plan", yolo=yolo), command("ls"))
    assert result == CommandVerdict(allowed=True, decision="read_only", sandbox="read-only")
    assert record["decision"] == "read_only" and record["rule"] == "read-only" and record["sandbox"] == "read-only"
    assert approver.requests == []


async def test_plan_refuses_what_is_not_proven_read_only(workspace):
    approver = FakeApprover("once")
    p = perms(workspace, approver, mode="plan", allow_commands=["pytest"])
    for request in (
        command("ls && pytest"),  # one part only a rule covers
        command("cat .env"),  # read-only, but protected
        command("ls", escalate=True),  # asks to leave the sandbox
    ):
        result, _ = await decide(p, request)
        assert result == CommandVerdict(allowed=False, decision="plan"), request.detail
    # without a sandbox nothing is proven safe to run
    result, _ = await decide(perms(workspace, approver, mode="plan", works=False), command("ls"))
    assert result == CommandVerdict(allowed=False, decision="plan")
    assert approver.requests == []


async def test_plan_refuses_mcp_tools_and_writes_outside_but_lets_reads_ask(workspace):
    approver = FakeApprover("once")
    p = perms(workspace, approver, mode="plan", yolo=False)
    mcp = ApprovalRequest(tool="mcp__s__t", kind="mcp", title="Call", key="mcp__s__t")
    write = ApprovalRequest(tool="filesystem-create", kind="outside", title="Write", key="outside:/x/y")
    for request in (mcp, write):
        result, _ = await decide(p, request)
        assert result == CommandVerdict(allowed=False, decision="plan")
    assert approver.requests == []
    read = write.model_copy(update={"tool": "filesystem-read"})
    fetch = ApprovalRequest(tool="web-fetch", kind="fetch", title="Fetch", key="fetch:a.com", detail="https://a.com")
    for request in (read, fetch):
        result, _ = await decide(p, request)
        assert result == CommandVerdict(allowed=True, decision="once")
    assert [r.kind for r in approver.requests] == ["outside", "fetch"]
    # and --yolo still answers those
    result, _ = await decide(perms(workspace, None, mode="plan", yolo=True), fetch)
    assert result == CommandVerdict(allowed=True, decision="yolo")


async def test_plan_with_yolo_still_looks_at_git(workspace, tmp_path):
    """--yolo skips the repository check (nothing runs sandboxed); plan mode does not."""
    (tmp_path / "elsewhere").mkdir()
    (workspace / ".git").symlink_to(tmp_path / "elsewhere")
    result, record = await decide(perms(workspace, None, mode="plan", yolo=True), command("git status"))
    assert result == CommandVerdict(allowed=False, decision="plan")
    assert record["protected"] == "git may reach outside the workspace: its .git is a symlink"


async def test_plan_refusal_tells_the_model_it_is_planning(workspace):
    (workspace / "a.txt").write_text("old\n")
    ctx = ToolContext(workspace=workspace, permissions=perms(workspace, FakeApprover("once"), mode="plan", yolo=True))
    res = await call(ctx, "filesystem-edit", filePath="a.txt", searchContent="old", replaceContent="new")
    assert res.is_error and res.content == PLAN_REFUSAL.format(title="Edit a.txt")
    assert "exit-plan-mode" in res.content and "nobody can approve" not in res.content
    assert (workspace / "a.txt").read_text() == "old\n" and res.meta["permission"]["decision"] == "plan"
    res = await call(ctx, "terminal-execute", command="touch made")
    assert res.content == PLAN_REFUSAL.format(title="Run command: touch made") and not (workspace / "made").exists()
    res = await call(ctx, "filesystem-create", filePath=str(workspace.parent / "out.txt"), content="x")
    assert res.content == PLAN_REFUSAL.format(title=f"Access {workspace.parent / 'out.txt'} (outside the workspace)")
    assert not (workspace.parent / "out.txt").exists()


# -- accept edits ------------------------------------------------------------------------------


async def test_accept_edits_runs_workspace_edits_unasked(workspace):
    approver = FakeApprover("deny")
    p = perms(workspace, approver, mode="acceptEdits")
    result, record = await decide(p, edit("src/a.py"))
    assert result == CommandVerdict(allowed=True, decision="accept_edits")
    assert record["decision"] == "accept_edits" and record["path"] == "src/a.py" and approver.requests == []


async def test_accept_edits_still_asks_for_commands_and_protected_or_unknown_targets(workspace):
    approver = FakeApprover("deny")
    p = perms(workspace, approver, mode="acceptEdits")
    for request in (
        command("touch x"),
        edit(".env"),
        edit("/elsewhere/a.py"),
        edit().model_copy(update={"title": "Edit"}),
    ):
        result, _ = await decide(p, request)
        assert result == CommandVerdict(allowed=False, decision="deny"), request.title
    assert len(approver.requests) == 4
    # without a workspace an edit's place is not known: it asks
    box = Sandbox(workspace, bwrap="/bin/true")
    p = Permissions(FakeApprover("deny"), sandbox=box, allow_commands=[], mode="acceptEdits")
    result, _ = await decide(p, edit())
    assert result == CommandVerdict(allowed=False, decision="deny")
    # in the default mode the same edit asks
    result, _ = await decide(perms(workspace, FakeApprover("deny")), edit())
    assert result.decision == "deny"


async def test_accept_edits_through_the_tools(workspace):
    (workspace / "a.txt").write_text("old\n")
    approver = FakeApprover("deny")
    ctx = ToolContext(workspace=workspace, permissions=perms(workspace, approver, mode="acceptEdits"))
    res = await call(ctx, "filesystem-edit", filePath="a.txt", searchContent="old", replaceContent="new")
    assert not res.is_error and (workspace / "a.txt").read_text() == "new\n"
    assert res.meta["permission"]["decision"] == "accept_edits"
    res = await call(ctx, "terminal-execute", command="touch made")
    assert res.is_error and not (workspace / "made").exists() and [r.kind for r in approver.requests] == ["command"]


async def test_accept_edits_asks_where_a_hook_said_ask(workspace):
    """A PreToolUse hook's "ask" (agent/hooks/) outranks the mode, as it outranks a rule."""
    approver = FakeApprover("deny")
    record = CallRecord("filesystem-edit")
    record.hook_permission = "ask"
    token = current_call.set(record)
    try:
        result = await perms(workspace, approver, mode="acceptEdits").check_command(edit())
    finally:
        current_call.reset(token)
    assert result == CommandVerdict(allowed=False, decision="deny") and len(approver.requests) == 1


def test_the_mode_comes_from_the_settings(workspace):
    from agent.settings.config import load_settings

    assert Permissions().mode == "default"  # what a front end shows when nothing was chosen

    assert Permissions.from_settings(load_settings(workspace)).mode == "default"
    assert Permissions.from_settings(load_settings(workspace, flags={"permission_mode": "plan"})).mode == "plan"


# -- the words around the modes ----------------------------------------------------------------


def test_shift_tab_order_and_names():
    assert [next_mode(m) for m in MODES] == ["acceptEdits", "plan", "default"]
    assert next_mode("bypassPermissions") == "default"
    assert is_mode("plan") and not is_mode("Plan") and not is_mode(None)


def test_the_mode_names_agree_everywhere():
    """settings/ and cli.py may not import tools/: they spell the names out."""
    from typing import get_args

    from agent.cli import PERMISSION_MODES
    from agent.settings.schema import PermissionMode

    assert get_args(PermissionMode) == MODES == PERMISSION_MODES


def _user(meta: dict | None = None) -> Message:
    return Message(role="user", content="hi", meta=meta or {})


def test_a_user_message_carries_its_mode_and_a_reminder_when_it_changed():
    assert user_meta([], "default") == {}
    assert user_meta([], "plan") == {"permission_mode": "plan", REMINDER_META: REMINDERS["plan"]}
    planned = [_user({"permission_mode": "plan"}), Message(role="assistant", content="ok")]
    assert user_meta(planned, "plan") == {"permission_mode": "plan"}  # the same mode: nothing to say
    assert user_meta(planned, "default") == {REMINDER_META: REMINDERS["default"]}
    assert user_meta(planned, "acceptEdits") == {
        "permission_mode": "acceptEdits",
        REMINDER_META: REMINDERS["acceptEdits"],
    }
    # the newest user message decides, not an older one
    assert user_meta([*planned, _user()], "default") == {}


def test_the_settings_key_needs_trust_to_widen(workspace):
    from agent.settings import trust
    from agent.settings.config import load_config, load_settings

    config = Path(workspace) / ".cairn" / "config.toml"
    config.parent.mkdir()
    config.write_text('permission_mode = "plan"\n')
    assert load_settings(workspace).permission_mode == "plan"  # narrows: no trust needed
    config.write_text('permission_mode = "acceptEdits"\n')
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.permission_mode == "default" and loaded.project_trust is not None
    trust.trust(workspace, trust.digest(config.read_bytes()))
    assert load_settings(workspace).permission_mode == "acceptEdits"
    config.write_text('permission_mode = "sometimes"\n')
    trust.trust(workspace, trust.digest(config.read_bytes()))
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.permission_mode == "default" and any("permission_mode" in w for w in loaded.warnings)
