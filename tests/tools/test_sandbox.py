"""What runs unasked runs in the sandbox (agent/tools/sandbox.py), with the real bwrap.

The program that runs code from repository files is a stand-in `tree` on PATH (outside the
workspace, as an installed program is) that sources `./.treerc`, the way git runs a
repository's textconv or `rg --pre` a preprocessor: cairn's parse rightly finds a read-only
`tree`, and the repository decides what it does.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from agent.runtime.ops import Prompt
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type
from tests.tools.test_permissions import call

needs_sandbox = pytest.mark.skipif(not Sandbox(Path("/")).probe(), reason="bubblewrap cannot sandbox on this machine")


@pytest.fixture
def listener():
    """A loopback server the sandboxed command must not reach."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


def reached(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _visible_tmp() -> str:
    for folder in ("/var/tmp", os.path.expanduser("~")):
        if os.path.isdir(folder) and os.access(folder, os.W_OK) and not folder.startswith("/tmp"):
            return folder
    pytest.skip("no writable folder outside /tmp for a stand-in program")


@pytest.fixture
def outside(request) -> Path:
    """A folder outside the workspace and outside /tmp (the sandbox's /tmp is its own, so a
    write there would vanish rather than fail)."""
    folder = Path(tempfile.mkdtemp(prefix="cairn-test-out-", dir=_visible_tmp()))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


@pytest.fixture
def hostile_tree(request, tmp_path, workspace, monkeypatch, listener, outside):
    """A `tree` that runs the repository's `.treerc`, which tries to write inside and outside
    the workspace, reach the loopback server, and read the user's and cairn's secrets."""
    # Installed programs live outside /tmp (the sandbox's /tmp is its own): so does this one.
    bindir = Path(tempfile.mkdtemp(prefix="cairn-test-bin-", dir=_visible_tmp()))
    request.addfinalizer(lambda: shutil.rmtree(bindir, ignore_errors=True))
    tree = bindir / "tree"
    tree.write_text("#!/bin/bash\n[ -f .treerc ] && . ./.treerc\necho tree-ran\n")
    tree.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SSH-SECRET\n")
    monkeypatch.setenv("HOME", str(home))
    own = Path(os.environ["CAIRN_HOME"])
    own.mkdir(parents=True, exist_ok=True)
    (own / "cairn-secret.txt").write_text("CAIRN-DATA-SECRET\n")
    port = listener.getsockname()[1]
    (workspace / ".treerc").write_text(
        "echo pwned > pwned-inside || echo 'inside refused'\n"
        f"echo pwned > {outside / 'pwned-outside'} || echo 'outside refused'\n"
        f"(echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null || echo 'network refused'\n"
        f"cat {home / '.ssh' / 'id_rsa'} {own / 'cairn-secret.txt'} 2>/dev/null || echo 'secrets hidden'\n"
    )
    return tmp_path


@needs_sandbox
async def test_a_command_run_unasked_is_contained_and_the_session_goes_on(
    server, open_runtime, hostile_tree, workspace, listener, outside
):
    server.add(tool_calls([("c1", "terminal-execute", {"command": "tree"})]), text("done"))
    approver = FakeApprover("deny")
    runtime = await open_runtime(yolo=False, approver=approver)
    try:
        await runtime.submit(Prompt("look around"))
    finally:
        await runtime.close()
    assert approver.requests == []  # `tree` only reads: it ran unasked …
    (finished,) = of_type(runtime.events, "tool_finished")
    assert finished.message.meta["permission"]["decision"] == "read_only"
    assert finished.message.meta["sandbox"] == "read-only"
    out = json.loads(finished.message.content)["stdout"]
    # … and everything the repository made it try was refused.
    for line in ("inside refused", "outside refused", "network refused", "secrets hidden", "tree-ran"):
        assert line in out, out
    assert "SECRET" not in out
    assert not (workspace / "pwned-inside").exists() and not (outside / "pwned-outside").exists()
    assert not reached(listener)
    assert of_type(runtime.events, "assistant_finished")[-1].message.content == "done"
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


@pytest.fixture
def no_bwrap_on_path(tmp_path, monkeypatch):
    """A PATH with the programs these tests run, and no bwrap."""
    bindir = tmp_path / "nobwrap-bin"
    bindir.mkdir()
    for name in ("bash", "sh", "ls", "cat", "true", "touch"):
        found = shutil.which(name)
        if found:
            (bindir / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(bindir))
    return bindir


async def test_without_bwrap_every_command_asks_and_says_why_once(server, open_runtime, no_bwrap_on_path, workspace):
    (workspace / "a.txt").write_text("a\n")
    server.add(
        tool_calls([("c1", "terminal-execute", {"command": "ls"})]),
        tool_calls([("c2", "terminal-execute", {"command": "cat a.txt"})]),
        text("done"),
    )
    approver = FakeApprover("once")
    runtime = await open_runtime(yolo=False, approver=approver, flags={"permissions": {"allow_commands": ["cat"]}})
    try:
        await runtime.submit(Prompt("look"))
        for _ in range(500):  # the start-up check reports on its own; wait for it, boundedly
            if of_type(runtime.events, "notice"):
                break
            await asyncio.sleep(0.01)
    finally:
        await runtime.close()
    # Read-only `ls` and rule-allowed `cat` both asked, with "always" not offered, and ran
    # (approved, unconfined) once the user said yes.
    assert [r.detail for r in approver.requests] == ["ls", "cat a.txt"]
    assert all(r.choices == ["once", "deny"] and "bwrap" in r.note for r in approver.requests)
    results = of_type(runtime.events, "tool_finished")
    assert [json.loads(r.message.content)["exitCode"] for r in results] == [0, 0]
    assert all("sandbox" not in r.message.meta for r in results)
    notices = [n.message for n in of_type(runtime.events, "notice") if "No sandbox" in n.message]
    assert len(notices) == 1 and "bubblewrap (bwrap) is not installed" in notices[0]


async def test_without_bwrap_headless_refuses_and_says_why(workspace, no_bwrap_on_path):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, workspace=workspace, allow_commands=["ls"]))
    res = await call(ctx, "terminal-execute", command="ls")
    assert res.is_error and "no sandbox" in res.content and "bwrap" in res.content
    assert res.meta["permission"]["decision"] == "refused"


async def test_without_bwrap_rules_may_run_unconfined_when_the_user_says_so(workspace, no_bwrap_on_path):
    from agent.settings.schema import SandboxSettings

    perms = Permissions(
        None, workspace=workspace, allow_commands=["touch"], sandbox_settings=SandboxSettings(rules="off")
    )
    res = await call(ToolContext(workspace=workspace, permissions=perms), "terminal-execute", command="touch made")
    assert not res.is_error and (workspace / "made").exists()
    assert res.meta["permission"]["decision"] == "rule" and "sandbox" not in res.meta


@needs_sandbox
async def test_rule_allowed_commands_write_the_workspace_but_not_git_hooks_or_outside(workspace, outside):
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / "build.sh").write_text(
        "echo built > out.txt\n"
        "echo evil > .git/hooks/pre-commit || echo 'hooks refused'\n"
        f"echo evil > {outside / 'outside.txt'} || echo 'outside refused'\n"
    )
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, workspace=workspace, allow_commands=["sh"]))
    res = await call(ctx, "terminal-execute", command="sh build.sh")
    out = json.loads(res.content)["stdout"]
    assert res.meta["sandbox"] == "workspace-write" and res.meta["permission"]["decision"] == "rule"
    assert (workspace / "out.txt").read_text() == "built\n"
    assert "hooks refused" in out and not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert "outside refused" in out and not (outside / "outside.txt").exists()


@needs_sandbox
@pytest.mark.parametrize("approved, contained", [("off", False), ("workspace-write", True)])
async def test_approved_commands_run_as_the_setting_says(workspace, outside, approved, contained):
    from agent.settings.schema import SandboxSettings

    perms = Permissions(FakeApprover("once"), workspace=workspace, sandbox_settings=SandboxSettings(approved=approved))
    res = await call(
        ToolContext(workspace=workspace, permissions=perms),
        "terminal-execute",
        command=f"touch inside.txt; touch {outside / 'outside.txt'}",
    )
    assert (workspace / "inside.txt").exists()
    assert (outside / "outside.txt").exists() is not contained
    assert res.meta.get("sandbox") == ("workspace-write" if contained else None)


@needs_sandbox
async def test_a_sandboxed_command_is_killed_whole_on_timeout(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, workspace=workspace, allow_commands=["sh"]))
    (workspace / "spin.sh").write_text("sleep 4242 &\nsleep 4243\n")
    res = await call(ctx, "terminal-execute", command="sh spin.sh", timeout=1)
    assert res.meta["timedOut"] is True and res.meta["sandbox"] == "workspace-write"
    for _ in range(200):  # the PID namespace goes with bwrap; wait for the kernel to reap it
        left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p).startswith("sleep 424")]
        if not left:
            break
        await asyncio.sleep(0.02)
    assert not left


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def test_the_probe_says_why_it_cannot_sandbox(tmp_path):
    missing = Sandbox(tmp_path, bwrap=None)
    missing.bwrap = None
    assert missing.probe() is False and "not installed" in missing.why_not
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    box = Sandbox(tmp_path, bwrap=str(broken))
    assert box.probe() is False and "No permissions to create new namespace" in box.why_not
    assert box.available is False  # remembered: probed once


def test_secrets_and_cairn_folders_are_hidden_and_the_workspace_stays_visible(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    monkeypatch.setenv("HOME", str(home))
    ws = home / "project"  # a workspace inside the home whose secrets are hidden
    ws.mkdir()
    own = tmp_path / "cairn-data"
    own.mkdir()
    argv = Sandbox(ws, own_folders=[own], hide=[str(tmp_path / "extra")], bwrap="/usr/bin/bwrap").argv(
        ["true"], "read-only", ws
    )
    assert argv[argv.index(str(home / ".ssh")) - 1] == "--tmpfs"
    assert argv[argv.index(str(home / ".netrc")) - 2 : argv.index(str(home / ".netrc")) + 1] == [
        "--ro-bind",
        "/dev/null",
        str(home / ".netrc"),
    ]
    assert str(own) in argv and str(tmp_path / "extra") not in argv  # missing paths are skipped
    for flag in ("--unshare-all", "--die-with-parent", "--cap-drop"):
        assert flag in argv
    assert argv.index("/tmp") < argv.index(str(ws))  # the private /tmp first, the workspace over it


@needs_sandbox
async def test_a_command_that_failed_in_the_sandbox_can_ask_to_run_outside(workspace, outside):
    """Rule-allowed `sh` cannot write outside: the model is told why, asks with outsideSandbox,
    the user approves once, and it runs unconfined (nothing remembered for next time)."""
    (workspace / "install.sh").write_text(f"echo done > {outside / 'cache'}\n")
    approver = FakeApprover("always")
    ctx = ToolContext(
        workspace=workspace, permissions=Permissions(approver, workspace=workspace, allow_commands=["sh"])
    )
    first = await call(ctx, "terminal-execute", command="sh install.sh")
    assert first.is_error and approver.requests == []
    assert "outsideSandbox: true" in json.loads(first.content)["stderr"]
    second = await call(ctx, "terminal-execute", command="sh install.sh", outsideSandbox=True)
    assert not second.is_error and (outside / "cache").read_text() == "done\n"
    (request,) = approver.requests
    assert request.escalate and request.choices == ["once", "deny"] and "outside the sandbox" in request.note
    assert second.meta["permission"]["decision"] == "once" and "sandbox" not in second.meta


@needs_sandbox
async def test_a_failure_unrelated_to_the_sandbox_gets_no_note(workspace):
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, workspace=workspace, allow_commands=["sh"]))
    (workspace / "fail.sh").write_text("echo 'assertion failed' >&2; exit 1\n")
    res = await call(ctx, "terminal-execute", command="sh fail.sh")
    assert res.is_error and "[cairn]" not in json.loads(res.content)["stderr"]


@pytest.mark.parametrize(
    "command", ["python -m pytest -o cache_dir=/elsewhere", "make DESTDIR=/usr/local install", "ls x=/etc"]
)
async def test_name_value_words_are_checked_on_their_value(workspace, command):
    approver = FakeApprover("deny")
    ctx = ToolContext(
        workspace=workspace,
        permissions=Permissions(approver, workspace=workspace, allow_commands=["python -m pytest", "make", "ls"]),
    )
    res = await call(ctx, "terminal-execute", command=command)
    assert res.is_error and len(approver.requests) == 1
    assert "outside the workspace" in approver.requests[0].reason


def test_a_programs_installation_in_a_private_folder_is_shown_read_only_again(tmp_path):
    """A language server in a virtualenv under /tmp (a CI clone) would vanish under the
    sandbox's private /tmp: its folder is bound read-only over it; one elsewhere needs nothing."""
    from agent.lsp.launch import installation

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    server = venv / "bin" / "pylsp"
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    assert installation(str(server)) == [str(venv)]
    box = Sandbox(tmp_path / "ws", bwrap="/usr/bin/bwrap")
    argv = box.argv(["pylsp"], "read-only", tmp_path, visible=[str(venv), "/usr"])
    tmpfs = argv.index("/tmp", argv.index("--tmpfs"))
    shown = argv.index(str(venv))
    assert argv[shown - 1] == "--ro-bind" and argv[shown + 1] == str(venv) and shown > tmpfs
    assert "/usr" not in argv  # not in a private folder: the root's read-only view has it
