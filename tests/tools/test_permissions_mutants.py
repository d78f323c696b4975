"""The approval decision (agent/tools/permissions.py) step by step, pinned where mutation testing
found it unwatched (issue 36, scripts/mutation.sh).

The decision is the one place that lets a command run unasked, offers "always", or records
what was decided; each step below is checked on its own answer rather than through a tool
run, so a broken condition shows as the step it broke. The sandbox is a real `Sandbox`
whose "bubblewrap" is `/bin/true` (every probe succeeds) or `/bin/false` (none does): the
decision only asks whether it is available.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from agent.tools.fetch_rules import fetch_covered, fetch_key
from agent.tools.permissions import (
    ALL_CHOICES,
    ONCE_ONLY,
    ApprovalRequest,
    CallRecord,
    CommandVerdict,
    Permissions,
    current_call,
    describe_scopes,
    mcp_server_rule,
)
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover


class Settings:
    """What `Permissions` reads of `[sandbox]`."""

    def __init__(self, rules: str = "workspace-write", approved: str = "off") -> None:
        self.rules, self.approved = rules, approved


def sandbox(workspace: Path, works: bool = True) -> Sandbox:
    box = Sandbox(workspace, bwrap="/bin/true" if works else "/bin/false")
    box.probe()
    return box


def perms(workspace, approver=None, *, works=True, rules="workspace-write", approved="off", **kw) -> Permissions:
    return Permissions(
        approver,
        workspace=workspace,
        sandbox=sandbox(workspace, works),
        sandbox_settings=Settings(rules, approved),
        allow_commands=kw.pop("allow_commands", []),
        **kw,
    )


def command(text: str, **kw) -> ApprovalRequest:
    return ApprovalRequest(
        tool="terminal-execute", kind="command", title="Run command", detail=text, key=f"command:{text}", **kw
    )


# -- web-fetch and MCP keys -----------------------------------------------------------------


def test_fetch_keys_are_lower_case_without_the_trailing_dot():
    assert fetch_key("Example.COM.") == "fetch:example.com"


@pytest.mark.parametrize(
    "keys, rule",
    [
        ({"fetch:a.b.example.com"}, "fetch:a.b.example.com"),
        ({"fetch:*.example.com"}, "fetch:*.example.com"),
        ({"fetch:*.b.example.com"}, "fetch:*.b.example.com"),
        ({"fetch:*.com"}, "fetch:*.com"),
        ({"fetch:*.a.b.example.com"}, None),  # a wildcard covers the hosts under it, not itself
        ({"fetch:example.com"}, None),
        (set(), None),
    ],
)
def test_fetch_rules_cover_a_host_and_its_subdomains(keys, rule):
    assert fetch_covered("fetch:a.b.example.com", keys) == rule


def test_a_domain_is_not_under_its_own_wildcard():
    assert fetch_covered("fetch:example.com", {"fetch:*.example.com"}) is None
    assert fetch_covered("fetch:example.com", {"fetch:*.com"}) == "fetch:*.com"


def test_an_mcp_tool_is_also_covered_by_its_whole_server():
    request = ApprovalRequest(tool="mcp__srv__tool", kind="mcp", title="t", key="mcp__srv__do__it")
    assert mcp_server_rule(request) == ["mcp__srv__*"]
    assert mcp_server_rule(request.model_copy(update={"kind": "command"})) == []
    assert mcp_server_rule(request.model_copy(update={"key": "srv__tool"})) == []


def test_the_modal_describes_what_always_covers():
    keys = ["command:git status", "command:ls", "edit", "outside:/x/y", "fetch:a.com", "other"]
    assert (
        describe_scopes(keys)
        == "`git status`, `ls` commands; file edits in the workspace; /x/y; fetching from a.com; other"
    )
    assert describe_scopes(["edit"]) == "file edits in the workspace"
    assert describe_scopes([]) == ""


# -- preparing a request ----------------------------------------------------------------------


def test_a_command_request_gets_its_scopes_and_all_choices(workspace):
    request, plan = perms(workspace).prepare(command("git status && ls -la && git status"))
    assert request.scopes == ["command:git status", "command:ls"]
    assert request.reason == "" and request.choices == ALL_CHOICES and request.note == ""
    assert plan is not None and plan.parts == [["git", "status"], ["ls", "-la"], ["git", "status"]]


def test_a_protected_command_offers_once_only(workspace):
    request, _ = perms(workspace).prepare(command("cat .env"))
    assert request.reason == "it names .env (.env files usually hold secrets)" and request.choices == ONCE_ONLY


def test_escalation_offers_once_only_with_a_note(workspace):
    request, _ = perms(workspace).prepare(command("ls", escalate=True))
    assert request.choices == ONCE_ONLY
    assert request.note == "The model asks to run this outside the sandbox: with your access, files and network."


def test_without_a_sandbox_commands_offer_once_only_and_say_why(workspace):
    p = perms(workspace, works=False)
    request, _ = p.prepare(command("ls"))
    assert request.choices == ONCE_ONLY
    assert request.note == (
        "No sandbox, so commands cannot run unasked: bubblewrap cannot create a sandbox here "
        '(exit 1). Set [sandbox] rules = "off" to let your rules run them unconfined.'
    )
    # rules the user lets run unconfined: "always" means something again
    request, _ = perms(workspace, works=False, rules="off").prepare(command("ls"))
    assert request.choices == ALL_CHOICES and request.note == ""
    # a sandbox not probed yet is not known to be missing: nothing to say yet
    request, _ = Permissions(
        workspace=workspace, sandbox=Sandbox(workspace, bwrap="/bin/true"), sandbox_settings=Settings()
    ).prepare(command("ls"))
    assert request.choices == ALL_CHOICES and request.note == ""
    request, _ = Permissions(workspace=workspace, sandbox_settings=Settings()).prepare(command("ls"))
    assert request.choices == ALL_CHOICES and request.note == ""


def test_the_target_of_a_file_request(workspace):
    p = perms(workspace)
    edit = ApprovalRequest(tool="filesystem-edit", kind="edit", title="Edit src/app.py", key="edit")
    assert p.prepare(edit)[0].path == "src/app.py"
    assert p.prepare(edit.model_copy(update={"path": "given.py"}))[0].path == "given.py"
    assert p.prepare(edit.model_copy(update={"title": "Edit"}))[0].path is None
    outside = ApprovalRequest(tool="filesystem-read", kind="outside", title="Read", key="outside:/x/y")
    assert p.prepare(outside)[0].path == "/x/y"
    assert p.prepare(outside.model_copy(update={"key": "elsewhere"}))[0].path is None
    token = current_call.set(CallRecord("filesystem-edit", path="from/call.py"))
    try:
        assert p.prepare(edit)[0].path == "from/call.py"
        assert p.prepare(edit.model_copy(update={"path": "given.py"}))[0].path == "given.py"
    finally:
        current_call.reset(token)
    token = current_call.set(CallRecord("filesystem-edit"))
    try:
        assert p.prepare(edit)[0].path == "src/app.py"
    finally:
        current_call.reset(token)


def test_file_requests_ask_with_a_reason_where_protected(workspace):
    p = perms(workspace)
    write_outside = ApprovalRequest(tool="filesystem-create", kind="outside", title="Write", key="outside:/x")
    request, plan = p.prepare(write_outside)
    assert plan is None and request.reason == "writing outside the workspace" and request.choices == ONCE_ONLY
    assert request.scopes == ["outside:/x"]
    read_outside = write_outside.model_copy(update={"tool": "filesystem-read"})
    assert p.prepare(read_outside)[0].reason == "" and p.prepare(read_outside)[0].choices == ALL_CHOICES
    edit = ApprovalRequest(tool="filesystem-edit", kind="edit", title="Edit .env", key="edit")
    assert p.prepare(edit)[0].reason == ".env files usually hold secrets"
    assert p.prepare(edit.model_copy(update={"title": "Edit a.py"}))[0].reason == ""
    # an edit with no target known has nothing to protect
    assert p.prepare(edit.model_copy(update={"title": "Edit"}))[0].reason == ""
    # a file request is never held back by the missing sandbox
    request, _ = perms(workspace, works=False).prepare(read_outside)
    assert request.choices == ALL_CHOICES and request.note == ""


# -- what covers a request --------------------------------------------------------------------


def rule(p: Permissions, request: ApprovalRequest):
    return p.rule_for(*p.prepare(request))


def test_read_only_parts_need_the_sandbox(workspace):
    assert rule(perms(workspace), command("ls && cat a.txt")) == "read-only"
    assert rule(perms(workspace, works=False), command("ls")) is None
    assert rule(perms(workspace, works=False, rules="off"), command("ls")) is None
    # without a sandbox a rule may still cover it, when the user lets rules run unconfined
    assert rule(perms(workspace, works=False, rules="off", allow_commands=["ls"]), command("ls")) == "allow_commands:ls"
    assert rule(perms(workspace, works=False, allow_commands=["ls"]), command("ls")) is None


def test_rules_and_read_only_parts_add_up(workspace):
    p = perms(workspace, allow_commands=["pytest"])
    assert rule(p, command("ls && pytest -x && ls && pytest")) == "read-only, allow_commands:pytest"
    assert rule(p, command("ls && touch x")) is None
    p.always.add("command:touch")
    assert rule(p, command("ls && touch x")) == "read-only, session:command:touch"
    p.project_keys.add("command:touch")
    assert rule(p, command("touch x")) == "session:command:touch"  # this session's answer first
    p.always.clear()
    assert rule(p, command("touch x")) == "project:command:touch"
    p.project_keys.add("edit")
    p.project_keys.add("command:")  # a key naming no command covers none
    assert rule(p, command("rm x")) is None


def test_nothing_covers_a_protected_escalated_or_empty_command(workspace):
    p = perms(workspace, allow_commands=["cat", "ls"])
    assert rule(p, command("cat .env")) is None
    assert rule(p, command("ls", escalate=True)) is None
    request, plan = p.prepare(command("ls"))
    assert p.rule_for(request, None) is None
    assert p.rule_for(request, plan.model_copy(update={"parts": []})) is None
    # a plan whose parts were not proven read-only is covered by rules alone
    assert p.rule_for(request, plan.model_copy(update={"read_only": []})) == "allow_commands:ls"


def test_fetch_and_file_rules(workspace):
    p = perms(workspace)
    fetch = ApprovalRequest(tool="web-fetch", kind="fetch", title="Fetch", key="fetch:a.example.com")
    assert rule(p, fetch) is None
    p.project_keys.add("fetch:*.example.com")
    assert rule(p, fetch) == "project:fetch:*.example.com"
    p.always.add("fetch:a.example.com")
    assert rule(p, fetch) == "session:fetch:a.example.com"
    mcp = ApprovalRequest(tool="mcp__srv__t", kind="mcp", title="t", key="mcp__srv__t")
    assert rule(p, mcp) is None
    p.project_keys.add("mcp__srv__*")
    assert rule(p, mcp) == "project:mcp__srv__*"
    p.always.add("mcp__srv__t")
    assert rule(p, mcp) == "session:mcp__srv__t"
    edit = ApprovalRequest(tool="filesystem-edit", kind="edit", title="Edit .env", key="edit")
    p.always.add("edit")
    assert rule(p, edit) is None  # protected: no rule covers it
    assert rule(p, edit.model_copy(update={"title": "Edit a.py"})) == "session:edit"


# -- the verdict --------------------------------------------------------------------------------


async def verdict(p: Permissions, text: str, **kw) -> tuple[CommandVerdict, dict]:
    record = CallRecord("terminal-execute")
    token = current_call.set(record)
    try:
        result = await p.check_command(command(text, **kw))
    finally:
        current_call.reset(token)
    [checked] = record.checks
    return result, checked


async def test_read_only_runs_in_the_read_only_sandbox(workspace):
    result, record = await verdict(perms(workspace, FakeApprover("deny")), "ls")
    assert result == CommandVerdict(allowed=True, decision="read_only", sandbox="read-only")
    assert record == {
        "tool": "terminal-execute",
        "kind": "command",
        "title": "Run command",
        "command": "ls",
        "keys": ["command:ls"],
        "decision": "read_only",
        "rule": "read-only",
        "allowed": True,
        "sandbox": "read-only",
    }


async def test_read_only_git_is_hardened_and_stops_at_the_workspace(workspace):
    result, _ = await verdict(perms(workspace, FakeApprover("deny")), "git status")
    assert result == CommandVerdict(
        allowed=True, decision="read_only", sandbox="read-only", harden_git=True, git_ceiling=True
    )
    # approved by the user: hardened still, but git may look above the workspace
    result, _ = await verdict(perms(workspace, FakeApprover("once")), "git status -x")
    assert result == CommandVerdict(allowed=True, decision="once", harden_git=False, git_ceiling=False)


async def test_rules_run_in_the_writable_sandbox_or_unconfined(workspace):
    result, record = await verdict(perms(workspace, allow_commands=["touch"]), "touch x")
    assert result == CommandVerdict(allowed=True, decision="rule", sandbox="workspace-write")
    assert record["rule"] == "allow_commands:touch" and record["sandbox"] == "workspace-write"
    result, record = await verdict(perms(workspace, allow_commands=["touch"], rules="off"), "touch x")
    assert result == CommandVerdict(allowed=True, decision="rule", sandbox=None)
    assert "sandbox" not in record and "no_sandbox" not in record
    result, record = await verdict(perms(workspace, allow_commands=["touch"], rules="off", works=False), "touch x")
    assert result == CommandVerdict(allowed=True, decision="rule", sandbox=None)
    assert record["no_sandbox"] == "bubblewrap cannot create a sandbox here (exit 1)"


@pytest.mark.parametrize(
    "approved, escalate, works, box",
    [
        ("off", False, True, None),
        ("workspace-write", False, True, "workspace-write"),
        ("workspace-write", True, True, None),
        ("workspace-write", False, False, None),
    ],
)
async def test_approved_commands_run_where_the_settings_say(workspace, approved, escalate, works, box):
    p = perms(workspace, FakeApprover("once"), approved=approved, works=works)
    result, _ = await verdict(p, "touch x", escalate=escalate)
    assert result == CommandVerdict(allowed=True, decision="once", sandbox=box)


async def test_yolo_runs_unconfined_and_asks_nothing(workspace):
    approver = FakeApprover("deny")
    result, record = await verdict(perms(workspace, approver, yolo=True), "cat .env && git status")
    assert result == CommandVerdict(allowed=True, decision="yolo", sandbox=None, harden_git=False)
    assert approver.requests == [] and record["decision"] == "yolo" and record["protected"]


async def test_denied_and_refused_commands(workspace):
    result, record = await verdict(perms(workspace, FakeApprover("deny")), "touch x")
    assert result == CommandVerdict(allowed=False, decision="deny") and record["allowed"] is False
    result, record = await verdict(perms(workspace, None), "touch x")
    assert result == CommandVerdict(allowed=False, decision="refused") and record["decision"] == "refused"


async def test_an_answer_outside_the_choices_is_narrowed(workspace):
    p = perms(workspace, FakeApprover("always"))
    result, record = await verdict(p, "cat .env")  # protected: "always" is not offered
    assert result.decision == "once" and record["protected"] and p.always == set()
    p.approver = FakeApprover("maybe")  # not an answer at all
    result, _ = await verdict(p, "touch x")
    assert result == CommandVerdict(allowed=False, decision="deny")
    p.approver = FakeApprover("deny")
    result, _ = await verdict(p, "cat .env")
    assert result.decision == "deny"


async def test_always_is_remembered_for_the_session(workspace):
    p = perms(workspace, FakeApprover("always"))
    await verdict(p, "touch a && cp a b")
    assert p.always == {"command:touch a", "command:cp a"}
    p.approver = FakeApprover("deny")
    result, record = await verdict(p, "touch a")
    assert result.decision == "rule" and record["rule"] == "session:command:touch a"


async def test_always_for_the_project_is_saved_and_applies_now(workspace):
    p = perms(workspace, FakeApprover("always_project"))
    _, record = await verdict(p, "touch a")
    assert "note" not in record  # cairn wrote the file: the folder stays trusted
    saved = tomllib.loads((workspace / ".cairn" / "config.toml").read_text())
    assert saved["permissions"]["allow_commands"] == ["touch a"]
    assert p.project_commands == ["touch a"] and p.always == {"command:touch a"}
    fetch = ApprovalRequest(tool="web-fetch", kind="fetch", title="Fetch", key="fetch:a.com", detail="https://a.com")
    record_call = CallRecord("web-fetch")
    token = current_call.set(record_call)
    try:
        assert await p.check(fetch)
    finally:
        current_call.reset(token)
    assert "fetch:a.com" in p.project_keys and "fetch:a.com" not in p.project_commands
    assert record_call.checks[0]["url"] == "https://a.com"


async def test_always_for_the_project_without_a_workspace_holds_this_session(tmp_path):
    p = Permissions(FakeApprover("always_project"), allow_commands=[], allow=[])
    request = ApprovalRequest(tool="web-fetch", kind="fetch", title="Fetch", key="fetch:a.com")
    record = CallRecord("web-fetch")
    token = current_call.set(record)
    try:
        assert await p.check(request)
    finally:
        current_call.reset(token)
    assert record.checks[0]["note"] == "not saved to .cairn/config.toml: the workspace is not known"
    assert p.always == {"fetch:a.com"} and p.project_keys == set()


async def test_file_requests_record_their_path(workspace):
    p = perms(workspace, FakeApprover("once"))
    record = CallRecord("filesystem-edit")
    token = current_call.set(record)
    try:
        edit = ApprovalRequest(tool="filesystem-edit", kind="edit", title="Edit a.py", key="edit")
        assert (await p.check_command(edit)) == CommandVerdict(allowed=True, decision="once")
    finally:
        current_call.reset(token)
    assert record.checks == [
        {
            "tool": "filesystem-edit",
            "kind": "edit",
            "title": "Edit a.py",
            "path": "a.py",
            "keys": ["edit"],
            "decision": "once",
            "allowed": True,
        }
    ]


def test_rules_apply_only_with_a_sandbox_or_by_choice(workspace):
    assert perms(workspace).can_sandbox
    assert not perms(workspace, works=False).can_sandbox
    assert not Permissions(workspace=workspace).can_sandbox  # not made until bound
    unprobed = Permissions(workspace=workspace, sandbox=Sandbox(workspace, bwrap="/bin/true"))
    assert not unprobed.can_sandbox


async def test_an_unprobed_sandbox_is_probed_before_a_command(workspace):
    box = Sandbox(workspace, bwrap="/bin/true")
    p = Permissions(
        FakeApprover("deny"), workspace=workspace, sandbox=box, allow_commands=[], sandbox_settings=Settings()
    )
    result, _ = await verdict(p, "ls")
    assert box.available is True and result.decision == "read_only"


def test_bind_learns_the_workspace_and_reads_the_project_rules_once(workspace, tmp_path):
    (workspace / ".cairn").mkdir()
    p = Permissions()
    p.bind(workspace)
    assert p.workspace == workspace and p.project_loaded and p.project_commands == []
    assert p.sandbox is not None and p.sandbox.workspace == str(Path(workspace).resolve())
    p.bind(tmp_path)
    assert p.workspace == workspace
    given = Permissions(allow_commands=["pytest"], workspace=workspace)
    given.bind(workspace)
    assert given.project_commands == ["pytest"]
    assert given.sandbox_rules == "workspace-write" and given.sandbox_approved == "off"


# -- keys with a colon or a space in what they name ---------------------------------------------


def test_what_a_key_names_is_everything_after_its_first_colon(workspace):
    keys = ["command:npm run:dev", "outside:/x:y", "fetch:host:8080"]
    assert describe_scopes(keys) == "`npm run:dev` commands; /x:y; fetching from host:8080"
    p = perms(workspace)
    p.always.add("command:npm run:dev")
    assert rule(p, command("npm run:dev --watch")) == "session:command:npm run:dev"
    assert rule(p, command("npm run")) is None
    outside = ApprovalRequest(tool="filesystem-read", kind="outside", title="Read", key="outside:/x:y")
    assert p.prepare(outside)[0].path == "/x:y"
    edit = ApprovalRequest(tool="filesystem-edit", kind="edit", title="Edit src/my file.py", key="edit")
    assert p.prepare(edit)[0].path == "src/my file.py"
    edit = ApprovalRequest(tool="filesystem-edit", kind="edit", title="Edit  lead.py", key="edit")
    assert p.prepare(edit)[0].path == " lead.py"


# -- settings, binding, probing -----------------------------------------------------------------


def test_permissions_from_settings(workspace):
    from agent.settings.config import load_settings

    settings = load_settings(workspace, flags={"yolo": True})
    p = Permissions.from_settings(settings, FakeApprover("deny"))
    assert p.yolo is True and p.workspace == settings.workspace
    assert p.sandbox is not None and p.sandbox.workspace == str(Path(settings.workspace).resolve())
    assert p.sandbox_loaded and (p.sandbox_rules, p.sandbox_approved) == (
        settings.sandbox.rules,
        settings.sandbox.approved,
    )
    assert p.project_commands == list(settings.permissions.allow_commands)
    assert not Permissions.from_settings(load_settings(workspace)).yolo


async def test_a_command_check_makes_the_sandbox_for_the_workspace(workspace):
    p = Permissions(FakeApprover("deny"), workspace=workspace, allow_commands=[])
    await verdict(p, "touch x")
    assert p.sandbox is not None and p.sandbox.available is not None


async def test_without_a_workspace_the_given_sandbox_is_kept(workspace):
    box = sandbox(workspace)
    p = Permissions(FakeApprover("deny"), sandbox=box, allow_commands=[])
    result, record = await verdict(p, "ls")
    assert p.sandbox is box and p.workspace is None
    assert result == CommandVerdict(allowed=False, decision="deny") and record["keys"] == ["command:ls"]


# -- a repository reaching outside --------------------------------------------------------------


def link_git(folder: Path, target: Path) -> None:
    target.mkdir(exist_ok=True)
    (folder / ".git").symlink_to(target)


async def test_git_that_may_reach_outside_asks_once(workspace, tmp_path):
    link_git(workspace, tmp_path / "elsewhere")
    approver = FakeApprover("always")
    result, record = await verdict(perms(workspace, approver), "git status")
    [request] = approver.requests
    assert request.reason == "git may reach outside the workspace: its .git is a symlink"
    assert request.choices == ONCE_ONLY
    assert result.decision == "once" and record["protected"] == request.reason


async def test_git_in_a_folder_the_command_changes_to(workspace, tmp_path):
    (workspace / "sub").mkdir()
    link_git(workspace / "sub", tmp_path / "elsewhere")
    approver = FakeApprover("deny")
    await verdict(perms(workspace, approver), "cd sub && git status")
    [request] = approver.requests
    assert request.reason == "git may reach outside the workspace: its .git is a symlink"


async def test_git_is_looked_at_only_for_what_would_run_unasked(workspace, tmp_path):
    link_git(workspace, tmp_path / "elsewhere")
    approver = FakeApprover("deny")
    _, record = await verdict(perms(workspace, approver), "git push")  # asks anyway: nothing to add
    assert approver.requests[0].reason == "" and approver.requests[0].choices == ALL_CHOICES
    assert "protected" not in record
    _, record = await verdict(perms(workspace, approver), "git status && cat .env")  # protected already
    assert record["protected"] == "it names .env (.env files usually hold secrets)"
    # yolo: nothing is asked, so nothing is looked at
    result, record = await verdict(perms(workspace, approver, yolo=True), "git status")
    assert result.decision == "yolo" and "protected" not in record


async def test_a_rule_saved_into_a_config_not_trusted_says_so(workspace):
    config = workspace / ".cairn" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\nallow_commands = ["make"]\n')  # written by someone else
    p = perms(workspace, FakeApprover("always_project"))
    _, record = await verdict(p, "touch a")
    assert record["note"] == (
        "saved to .cairn/config.toml, but this folder's config is not trusted: "
        "later sessions apply it only after `cairn trust`"
    )
    assert "touch a" in p.project_commands


def test_a_call_record_names_its_tool():
    record = CallRecord("terminal-execute", path="a.py")
    assert (record.tool, record.path, record.checks) == ("terminal-execute", "a.py", [])


def test_bind_reads_the_sandbox_settings_unless_given(workspace, _isolated_home):
    from agent.paths import config_dir, data_dir

    (_isolated_home / "config.toml").write_text('[sandbox]\nrules = "off"\napproved = "workspace-write"\n')
    p = Permissions()
    p.bind(workspace)
    assert (p.sandbox_rules, p.sandbox_approved) == ("off", "workspace-write")
    assert p.sandbox is not None and p.sandbox.own_folders == [str(data_dir()), str(config_dir())]
    given = Permissions(sandbox_settings=Settings("workspace-write", "off"))
    given.bind(workspace)
    assert (given.sandbox_rules, given.sandbox_approved) == ("workspace-write", "off")


def test_the_sandbox_made_on_bind_hides_what_sandbox_hide_names(workspace, tmp_path, _isolated_home):
    """`[sandbox] hide`, given or read from the config, reaches the sandbox made for the workspace."""
    from agent.settings.schema import SandboxSettings

    secret = tmp_path / "keys"
    secret.mkdir()
    given = Permissions(sandbox_settings=SandboxSettings(hide=[str(secret)]))
    given.bind(workspace)
    assert given.sandbox is not None and os.path.realpath(secret) in given.sandbox.hidden()
    (_isolated_home / "config.toml").write_text(f"[sandbox]\nhide = [{json.dumps(str(secret))}]\n")
    read = Permissions()
    read.bind(workspace)
    assert read.sandbox is not None and os.path.realpath(secret) in read.sandbox.hidden()
    plain = Permissions(sandbox_settings=SandboxSettings())
    plain.bind(workspace)
    assert plain.sandbox is not None and os.path.realpath(secret) not in plain.sandbox.hidden()


async def test_without_workspace_or_sandbox_a_command_still_gets_an_answer():
    result, _ = await verdict(Permissions(FakeApprover("deny"), allow_commands=[]), "ls")
    assert result == CommandVerdict(allowed=False, decision="deny")


@pytest.mark.parametrize("answer", ["always", "always_project"])
async def test_remembered_answers_run_where_approved_ones_do(workspace, answer):
    p = perms(workspace, FakeApprover(answer), approved="workspace-write")
    result, _ = await verdict(p, "touch x")
    assert result == CommandVerdict(allowed=True, decision=answer, sandbox="workspace-write")


async def test_rule_allowed_commands_with_read_only_git_stop_at_the_workspace(workspace):
    result, _ = await verdict(perms(workspace, allow_commands=["touch"]), "git status && touch x")
    assert result == CommandVerdict(
        allowed=True, decision="rule", sandbox="workspace-write", harden_git=True, git_ceiling=True
    )


async def test_a_project_rule_keeps_a_colon_in_its_command(workspace):
    p = perms(workspace, FakeApprover("always_project"))
    await verdict(p, "npm run:dev")
    assert p.project_commands == ["npm run:dev"]
