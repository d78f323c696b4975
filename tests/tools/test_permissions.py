"""Permissions: what asks, what runs unasked, what is remembered where, and what is stored."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import subprocess
import tomllib

import pytest

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt
from agent.session.models import ToolCall
from agent.settings import trust
from agent.settings.config import load_settings
from agent.settings.config_write import add_project_permissions
from agent.tools.base import ToolContext
from agent.tools.permissions import MAX_ANALYSED_COMMAND_BYTES, Permissions, analyse_command
from agent.tools.registry import default_registry
from tests.fakes.approver import FakeApprover
from tests.fakes.llm_server import text, tool_calls


async def call(ctx, name, **args):
    """One tool call through the registry, as the loop makes it."""
    return await default_registry().execute(ToolCall(id="c1", name=name, arguments=json.dumps(args)), ctx)


def make_ctx(workspace, approver=None, **kw):
    return ToolContext(workspace=workspace, permissions=Permissions(approver, workspace=workspace, **kw))


# -- splitting commands ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "command, parts",
    [
        ("pytest -x && git status", [["pytest", "-x"], ["git", "status"]]),
        ("a; b || c | d & e", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ("pytest\nrm -rf build", [["pytest"], ["rm", "-rf", "build"]]),
        ("pytest #; rm -rf /", [["pytest"]]),  # a comment: bash runs only pytest
        ('git commit -m "a; b && c"', [["git", "commit", "-m", "a; b && c"]]),
        ("pytest 2>&1 | tail -5", [["pytest"], ["tail", "-5"]]),
        ("make > /dev/null", [["make"]]),
    ],
)
def test_commands_split_into_simple_commands(command, parts):
    plan = analyse_command(command)
    assert plan.unsafe == "" and plan.parts == parts


@pytest.mark.parametrize(
    "command, why",
    [
        ("echo $(rm -rf ~)", "$(…)"),
        ("echo `id`", "backticks"),
        ("pytest#; rm -rf /", "cannot be parsed"),  # `#` mid-word: the parser and bash disagree
        ('ls "$\\\n(touch x)"', "backslash-newline"),  # bash joins it into $(touch x)
        ("cp evil .gi?/config", "glob"),
        ("diff <(ls a) <(ls b)", "process substitution"),
        ("(cd x; rm y)", "subshell"),
        ("pytest > report.txt", "redirects output into report.txt"),
        ("cat <<EOF\nx\nEOF", "here-document"),
        ('echo "unterminated', "cannot be parsed"),
        ("cat .env", ".env"),
        ("cat < config/.env.local", ".env"),
        ("cp hook .git/hooks/pre-commit", ".git"),
    ],
)
def test_commands_rules_cannot_cover(command, why):
    assert why in analyse_command(command).unsafe


def test_cd_asks_when_cdpath_may_send_it_elsewhere(monkeypatch, workspace):
    (workspace / "sub").mkdir()
    assert analyse_command("cd sub && ls", workspace=workspace).read_only == [True, True]
    monkeypatch.setenv("CDPATH", "/")
    assert "CDPATH" in analyse_command("cd sub && ls", workspace=workspace).unsafe
    assert analyse_command("cd ./sub && ls", workspace=workspace).read_only == [True, True]


@pytest.mark.parametrize(
    "lang, asks", [("zh_CN.GBK", True), ("ja_JP", True), ("C.UTF-8", False), ("C", False), ("de_DE.ISO-8859-1", False)]
)
def test_non_ascii_asks_where_bash_may_read_the_bytes_differently(monkeypatch, lang, asks):
    monkeypatch.delenv("LC_CTYPE", raising=False)
    monkeypatch.setenv("LC_ALL", lang)
    assert bool(analyse_command("cat résumé.txt").unsafe) == asks
    assert analyse_command("cat resume.txt").unsafe == ""


@pytest.mark.parametrize(
    "command",
    [
        "pytest " + "x" * (2 * 1024 * 1024),
        "a && " * (400 * 1024),  # many parts: the splitter's worst case
        "echo " + "é" * (70 * 1024),  # under the cap in characters, over it in bytes
    ],
)
def test_huge_commands_are_not_analysed(command):
    plan = analyse_command(command)
    assert plan.parts == [] and plan.unsafe == "the command is too long to check"


def test_a_command_at_the_cap_is_still_analysed():
    command = "pytest " + "x" * (MAX_ANALYSED_COMMAND_BYTES - len("pytest "))
    assert analyse_command(command).parts == [["pytest", command.split()[1]]]


async def test_a_huge_command_asks_once_only_without_rules(workspace):
    approver = FakeApprover("deny")
    ctx = make_ctx(workspace, approver, allow_commands=["pytest"])
    res = await call(ctx, "terminal-execute", command="pytest " + "x" * (2 * 1024 * 1024))
    assert res.is_error and len(approver.requests) == 1
    request = approver.requests[0]
    assert request.reason == "the command is too long to check" and request.choices == ["once", "deny"]


# -- the allowlist and remembered decisions ---------------------------------------------------


async def test_read_only_tools_never_ask(workspace):
    (workspace / "a.py").write_text("x = 1\n")
    approver = FakeApprover("deny")
    res = await call(make_ctx(workspace, approver), "filesystem-read", filePath="a.py")
    assert not res.is_error and "x = 1" in res.content
    assert approver.requests == [] and "permission" not in res.meta


async def test_allowlisted_prefix_runs_unasked_and_is_recorded(workspace):
    approver = FakeApprover("deny")
    ctx = make_ctx(workspace, approver, allow_commands=["touch", "git status"])
    res = await call(ctx, "terminal-execute", command="touch made")
    assert not res.is_error and (workspace / "made").exists() and approver.requests == []
    assert res.meta["permission"] == {
        "tool": "terminal-execute",
        "kind": "command",
        "title": "Run command",
        "command": "touch made",
        "keys": ["command:touch made"],
        "decision": "rule",
        "rule": "allow_commands:touch",
        "allowed": True,
        "sandbox": "workspace-write",
    }


@pytest.mark.parametrize(
    "command, asks",
    [
        ("git add --all", False),
        ("git add -A && touch ok", False),  # every part allowed
        ("git addx", True),  # whole words only
        ("git add -A; touch ok; rm -rf x", True),  # one part is not allowed
        ("touch $(rm -rf x)", True),  # substitution: rules never apply
        ("FOO=1 touch x", True),  # an assignment prefix: rules never apply
    ],
)
async def test_compound_commands_need_every_part_allowed(workspace, command, asks):
    approver = FakeApprover("deny")
    perms = Permissions(approver, allow_commands=["git add", "touch"], workspace=workspace)
    ctx = ToolContext(workspace=workspace, permissions=perms)
    res = await call(ctx, "terminal-execute", command=command)
    assert bool(approver.requests) == asks
    assert res.meta["permission"]["decision"] == ("deny" if asks else "rule")


async def test_read_only_commands_run_unasked_and_are_recorded(workspace):
    (workspace / "a.txt").write_text("one\ntwo\n")
    approver = FakeApprover("deny")
    ctx = make_ctx(workspace, approver, allow_commands=["pytest"])
    res = await call(ctx, "terminal-execute", command="cat a.txt | wc -l && git status 2>/dev/null")
    assert approver.requests == [] and json.loads(res.content)["stdout"].startswith("2\n")
    assert res.meta["permission"]["decision"] == "read_only" and res.meta["permission"]["rule"] == "read-only"
    res = await call(ctx, "terminal-execute", command="ls && pytest --version")  # a rule and a read-only part
    assert approver.requests == [] and res.meta["permission"]["decision"] == "rule"
    assert res.meta["permission"]["rule"] == "read-only, allow_commands:pytest"


@pytest.mark.parametrize(
    "command, protected",
    [
        ("sort -o a.txt a.txt", False),  # writes: an ordinary question
        ("find . -delete", False),
        ("cat ../.env", True),  # from workingDirectory `sub`, that is the workspace's .env
        ("cat ../../outside.txt", True),  # `..` out of the workspace
        ("ls link", True),  # a symlink out of the workspace
    ],
)
async def test_read_only_paths_are_resolved_in_the_working_directory(workspace, tmp_path, command, protected):
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("b\na\n")
    (workspace / ".env").write_text("K=v\n")
    (tmp_path / "elsewhere").mkdir()
    (workspace / "sub" / "link").symlink_to(tmp_path / "elsewhere")
    approver = FakeApprover("deny")
    res = await call(make_ctx(workspace, approver), "terminal-execute", command=command, workingDirectory="sub")
    [req] = approver.requests
    assert res.is_error and bool(req.reason) == protected
    assert req.choices == (["once", "deny"] if protected else ["once", "always", "always_project", "deny"])
    assert (workspace / "a.txt").read_text() == "b\na\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_git_runs_unasked_without_the_repository_config_running_programs(workspace):
    """A repository unpacked from an archive may ship .git/config: `core.fsmonitor` runs on
    `git status`. Read-only git still runs unasked, but with git's own switch forcing it off."""
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    approver = FakeApprover("deny")
    ctx = make_ctx(workspace, approver)
    res = await call(ctx, "terminal-execute", command="git status --short")
    assert approver.requests == [] and res.meta["permission"]["decision"] == "read_only"
    subprocess.run(["git", "config", "core.fsmonitor", "touch pwned; echo"], cwd=workspace, check=True)
    res = await call(ctx, "terminal-execute", command="git status --short")
    assert approver.requests == [] and not res.is_error, res.content
    assert not (workspace / "pwned").exists()


async def test_always_this_session_covers_the_scope_only(workspace):
    approver = FakeApprover("always")
    ctx = make_ctx(workspace, approver)
    await call(ctx, "terminal-execute", command="touch a && cp a hi")
    [req] = approver.requests
    assert req.scopes == ["command:touch a", "command:cp a"] and "always_project" in req.choices
    approver.decision = "deny"
    res = await call(ctx, "terminal-execute", command="cp a there")
    assert not res.is_error and len(approver.requests) == 1 and (workspace / "there").exists()
    assert res.meta["permission"]["rule"] == "session:command:cp a"
    res = await call(ctx, "terminal-execute", command="touch b")  # another scope: asks again
    assert len(approver.requests) == 2 and res.is_error and not (workspace / "b").exists()


async def test_always_for_this_project_is_written_to_config_and_loaded_next_time(workspace):
    config = workspace / ".cairn" / "config.toml"
    config.parent.mkdir()
    config.write_text('# my project\nmodel = "openai/x"\n\n[permissions]\nallow_commands = [\n  "ls",  # listing\n]\n')
    trust.trust(workspace, trust.digest(config.read_bytes()))  # the user trusted this folder (agent/settings/trust.py)
    approver = FakeApprover("always_project")
    ctx = make_ctx(workspace, approver)
    res = await call(ctx, "terminal-execute", command="touch one")
    assert res.meta["permission"]["decision"] == "always_project" and "note" not in res.meta["permission"]
    await call(ctx, "filesystem-create", filePath="new.txt", content="x\n")
    saved = tomllib.loads(config.read_text())
    assert saved == {"model": "openai/x", "permissions": {"allow_commands": ["ls", "touch one"], "allow": ["edit"]}}
    assert config.read_text().startswith("# my project\n")  # the rest of the file is kept

    # A new session of the project: settings carry the rules, nothing asks.
    settings = load_settings(workspace)
    assert settings.permissions.allow_commands == ["ls", "touch one"]
    later = FakeApprover("deny")
    ctx = ToolContext(workspace=workspace, permissions=Permissions.from_settings(settings, later))
    assert not (await call(ctx, "terminal-execute", command="touch one two")).is_error
    res = await call(ctx, "filesystem-create", filePath="other.txt", content="y\n")
    assert not res.is_error and later.requests == []
    assert res.meta["permission"]["rule"] == "project:edit"


async def test_project_rules_load_even_when_the_loop_passes_none(workspace):
    add_project_permissions(workspace, ["command:touch"])
    approver = FakeApprover("deny")
    res = await call(make_ctx(workspace, approver), "terminal-execute", command="touch x")
    assert not res.is_error and approver.requests == []


def test_user_and_project_allowlists_add_up(workspace, _isolated_home):
    (_isolated_home / "config.toml").write_text('[permissions]\nallow_commands = ["pytest"]\n')
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text('[permissions]\nallow_commands = ["ruff check"]\n')
    trust.trust(workspace, trust.digest((workspace / ".cairn" / "config.toml").read_bytes()))
    assert load_settings(workspace).permissions.allow_commands == ["pytest", "ruff check"]


def test_project_config_in_an_unusual_layout_is_updated_in_its_own_style(workspace):
    config = workspace / ".cairn" / "config.toml"
    config.parent.mkdir()
    config.write_text('permissions.allow = ["edit"]\n')
    add_project_permissions(workspace, ["command:pytest"])  # more layouts: tests/test_config.py
    assert config.read_text() == 'permissions.allow = ["edit"]\npermissions.allow_commands = ["pytest"]\n'


async def test_always_for_this_project_that_cannot_be_saved_still_holds_this_session(workspace):
    config = workspace / ".cairn" / "config.toml"
    config.parent.mkdir()
    config.write_text("permissions = 3\n")  # not a table: cairn will not touch it
    approver = FakeApprover("always_project")
    ctx = make_ctx(workspace, approver)
    res = await call(ctx, "terminal-execute", command="touch x")
    assert not res.is_error and "not saved to .cairn/config.toml" in res.meta["permission"]["note"]
    assert config.read_text() == "permissions = 3\n"
    await call(ctx, "terminal-execute", command="touch x y")
    assert len(approver.requests) == 1


# -- protected targets ------------------------------------------------------------------------


@pytest.mark.parametrize("path", [".env", "config/.env.local", ".git/config", ".cairn/config.toml"])
async def test_protected_files_ask_despite_always_and_allow(workspace, path):
    approver = FakeApprover("always")
    ctx = make_ctx(workspace, approver, allow=["edit"])
    ctx.permissions.always.add("edit")
    res = await call(ctx, "filesystem-create", filePath=path, content="X=1\n")
    [req] = approver.requests
    assert req.choices == ["once", "deny"] and req.reason
    assert not res.is_error and (workspace / path).read_text() == "X=1\n"
    # "always" is not offered there: it counted as once and is not remembered.
    assert res.meta["permission"]["decision"] == "once" and res.meta["permission"]["protected"] == req.reason
    await call(ctx, "filesystem-create", filePath=path, content="X=2\n", overwrite=True)
    assert len(approver.requests) == 2


async def test_outside_writes_always_ask_twice_and_never_stick(workspace, tmp_path):
    target = tmp_path / "elsewhere.txt"
    approver = FakeApprover("always")
    ctx = make_ctx(workspace, approver, allow=["edit"])
    for n in range(2):
        res = await call(ctx, "filesystem-create", filePath=str(target), content=f"{n}\n", overwrite=True)
        assert not res.is_error
    assert [r.kind for r in approver.requests] == ["outside", "edit"] * 2
    assert all(r.choices == ["once", "deny"] for r in approver.requests)
    assert [c["kind"] for c in res.meta["permission_checks"]] == ["outside", "edit"]


async def test_outside_reads_may_be_remembered(workspace, tmp_path):
    (tmp_path / "notes.txt").write_text("hi\n")
    approver = FakeApprover("always")
    ctx = make_ctx(workspace, approver)
    for _ in range(2):
        assert not (await call(ctx, "filesystem-read", filePath=str(tmp_path / "notes.txt"))).is_error
    assert len(approver.requests) == 1


async def test_yolo_asks_nothing_not_even_protected(workspace):
    approver = FakeApprover("deny")
    ctx = make_ctx(workspace, approver, yolo=True)
    res = await call(ctx, "filesystem-create", filePath=".env", content="K=v\n")
    assert not res.is_error and approver.requests == []
    assert res.meta["permission"]["decision"] == "yolo" and res.meta["permission"]["protected"]


# -- nothing runs before the answer -------------------------------------------------------------


async def test_command_does_not_run_before_approval(workspace, monkeypatch):
    """The command is started only after the approver answered. What is checked is the order
    of two events (the approver's answer, the command's spawn), recorded as they happen, so
    a slow machine cannot make the check vacuous the way a fixed sleep could."""
    order: list[str] = []
    requests = []
    real_spawn = asyncio.create_subprocess_exec

    def recording_spawn(*argv, **kwargs):
        order.append(f"spawned {argv[-1]}")  # bash -c COMMAND, or the sandbox's argv ending so
        return real_spawn(*argv, **kwargs)

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recording_spawn)

    async def approver(request):
        requests.append(request)
        order.append("asked")
        # Event-loop turns, not wall-clock time: work started alongside the question (a task,
        # a callback) runs during these turns however slow the machine is.
        for _ in range(50):
            await asyncio.sleep(0)
        assert not (workspace / "marker").exists() and not task.done()
        order.append("answered")
        return "once"

    ctx = make_ctx(workspace, approver)
    task = asyncio.create_task(call(ctx, "terminal-execute", command="touch marker"))
    res = await asyncio.wait_for(task, 30)
    assert order == ["asked", "answered", "spawned touch marker"]
    assert not res.is_error and (workspace / "marker").exists()
    assert requests[0].detail == "touch marker"


async def test_denied_edit_leaves_the_file(workspace):
    (workspace / "a.txt").write_text("old\n")
    res = await call(
        make_ctx(workspace, FakeApprover("deny")),
        "filesystem-edit",
        filePath="a.txt",
        searchContent="old",
        replaceContent="new",
    )
    assert res.is_error and (workspace / "a.txt").read_text() == "old\n"
    assert res.meta["permission"]["decision"] == "deny" and res.meta["permission"]["allowed"] is False


# -- headless and the stored record -------------------------------------------------------------


async def test_nobody_to_ask_refuses_with_a_clear_message(workspace):
    res = await call(make_ctx(workspace, None), "terminal-execute", command="touch made")
    assert res.is_error and not (workspace / "made").exists()
    assert "nobody can approve" in res.content and "--yolo" in res.content
    assert res.meta["permission"]["decision"] == "refused"


async def test_headless_refuses_with_a_note_stores_decisions_and_honours_project_rules(server, workspace):
    from agent.headless.run import run_headless
    from agent.runtime.runtime import Runtime
    from agent.session.store import Store

    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("could not"))
    flags = {"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test"}
    out, err = io.StringIO(), io.StringIO()
    assert await run_headless(load_settings(workspace, flags=flags), "make it", out=out, err=err) == 0
    assert not (workspace / "made").exists()
    assert "Note: not allowed without approval: Run command: touch made" in err.getvalue()

    # In the TUI's runtime the user's answer is stored with the tool message.
    async def approver(request):
        return "always_project"

    server.add(tool_calls([("c2", "terminal-execute", {"command": "touch made"})]), text("done"))
    runtime = await Runtime.open(
        load_settings(workspace, flags=flags), FrontEnd(on_event=lambda e: None, approver=approver)
    )
    try:
        await runtime.submit(Prompt("again"))
        session_id = runtime.agent.session.id
    finally:
        await runtime.close()
    store = await Store.open()
    try:
        [tool_message] = [m for m in await store.all_messages(session_id) if m.role == "tool"]
    finally:
        await store.close()
    assert (workspace / "made").exists()
    assert tool_message.meta["permission"]["decision"] == "always_project"
    assert tool_message.meta["permission"]["command"] == "touch made"
    assert load_settings(workspace).permissions.allow_commands == ["touch made"]

    # The project rule now lets `cairn -p` run it without --yolo.
    (workspace / "made").unlink()
    server.add(tool_calls([("c3", "terminal-execute", {"command": "touch made"})]), text("made"))
    out, err = io.StringIO(), io.StringIO()
    assert await run_headless(load_settings(workspace, flags=flags), "once more", out=out, err=err) == 0
    assert (workspace / "made").exists() and "Note: not allowed" not in err.getvalue()
