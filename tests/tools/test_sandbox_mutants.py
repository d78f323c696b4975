"""The sandbox's command line and what it hides (agent/tools/sandbox.py), pinned where mutation
testing found it unwatched (issue 36, scripts/mutation.sh).

tests/tools/test_sandbox.py proves with the real bwrap that a command is contained; this file
states the whole bwrap command line for a known layout, because one option lost or one mount
in the wrong order (a secret mounted before the workspace that covers it, a hook folder left
writable) is a hole no end-to-end run happens to walk into.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.tools import sandbox as sandbox_module
from agent.tools.sandbox import PRIVATE_FOLDERS, SECRET_PATHS, Sandbox

TAIL = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--chdir"]


def private() -> list[str]:
    """The /tmp-like folders of this machine that get a private copy (symlinks to them do not)."""
    out: list[str] = []
    for folder in PRIVATE_FOLDERS:
        if os.path.isdir(folder) and not os.path.islink(folder):
            out += ["--tmpfs", folder]
    return out


@pytest.fixture
def layout(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".cairn").mkdir()
    (ws / "secret.txt").write_text("s\n")
    own = tmp_path / "cairn-data"
    own.mkdir()
    return SimpleNamespace(home=home, ws=ws, own=own, tmp=tmp_path)


def test_read_only_command_line(layout):
    box = Sandbox(layout.ws, own_folders=[layout.own], hide=[str(layout.ws / "secret.txt")], bwrap="/x/bwrap")
    ws = str(layout.ws)
    assert box.argv(["ls", "-a"], "read-only", layout.ws / "sub") == [
        "/x/bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *private(),
        "--tmpfs",
        str(layout.home / ".ssh"),
        "--ro-bind",
        "/dev/null",
        str(layout.home / ".netrc"),
        "--tmpfs",
        str(layout.own),
        "--ro-bind",
        ws,
        ws,
        "--ro-bind",
        "/dev/null",
        str(layout.ws / "secret.txt"),
        *TAIL,
        str(layout.ws / "sub"),
        "--",
        "ls",
        "-a",
    ]


def test_workspace_write_keeps_the_git_folder_and_cairn_read_only(layout):
    (layout.ws / ".claude").symlink_to(layout.tmp)  # a symlink is not bound over
    box = Sandbox(layout.ws, bwrap="/x/bwrap")
    ws = str(layout.ws)
    argv = box.argv(["make"], "workspace-write", ws)
    assert argv == [
        "/x/bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *private(),
        "--tmpfs",
        str(layout.home / ".ssh"),
        "--ro-bind",
        "/dev/null",
        str(layout.home / ".netrc"),
        "--bind",
        ws,
        ws,
        "--ro-bind",
        f"{ws}/.cairn",
        f"{ws}/.cairn",
        "--ro-bind",
        f"{ws}/.git",
        f"{ws}/.git",
        *TAIL,
        ws,
        "--",
        "make",
    ]


def test_secrets_around_the_workspace_are_mounted_before_it(layout):
    """A project inside a hidden folder: the folder's empty copy first, the workspace over it;
    the workspace itself is never hidden, a folder beside it with a longer name is not inside it."""
    inner = layout.home / ".ssh" / "project"
    inner.mkdir()
    sibling = Path(str(inner) + "-other")
    sibling.mkdir()
    box = Sandbox(inner, hide=[str(inner), str(sibling)], bwrap="/x/bwrap")
    argv = box.argv(["true"], "read-only", inner)
    assert argv.count(str(inner)) == 3  # `--ro-bind ws ws` and `--chdir ws`, nothing else
    assert argv.index(str(layout.home / ".ssh")) < argv.index(str(inner))
    assert argv[argv.index(str(sibling)) - 1] == "--tmpfs"
    assert argv.index(str(sibling)) < argv.index(str(inner))


def test_hidden_paths_are_real_existing_and_once(layout, tmp_path):
    target = tmp_path / "real-secrets"
    target.mkdir()
    link = tmp_path / "link-to-secrets"
    link.symlink_to(target)
    box = Sandbox(
        layout.ws,
        hide=[str(link), str(tmp_path / "missing"), str(target), "~/.netrc"],
        own_folders=[layout.own, layout.own],
    )
    assert box.hidden() == [str(layout.home / ".ssh"), str(layout.home / ".netrc"), str(target), str(layout.own)]
    assert box.hide[: len(SECRET_PATHS)] == list(SECRET_PATHS)


def test_a_dangling_secret_link_hides_nothing(layout, tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    box = Sandbox(layout.ws, hide=[str(tmp_path / "dangling")])
    assert box.hidden() == [str(layout.home / ".ssh"), str(layout.home / ".netrc")]


def test_the_environment_points_temporary_files_at_the_private_tmp():
    env = {
        "TMPDIR": "/var/folders/x",
        "SSH_AUTH_SOCK": "/run/agent",
        "DBUS_SESSION_BUS_ADDRESS": "unix:x",
        "PATH": "/usr/bin",
        "HOME": "/home/u",
    }
    box = Sandbox(Path("/"), bwrap="/x/bwrap")
    assert box.environment(env) == {"PATH": "/usr/bin", "HOME": "/home/u", "TMPDIR": "/tmp"}
    assert env["TMPDIR"] == "/var/folders/x"  # the caller's copy is left alone
    assert box.environment({}) == {"TMPDIR": "/tmp"}


def test_the_probe_runs_true_once_and_remembers(tmp_path):
    box = Sandbox(tmp_path, bwrap="/bin/true")
    assert box.available is None and box.why_not == ""
    assert box.probe() is True and box.available is True and box.why_not == ""
    box.bwrap = "/bin/false"
    assert box.probe() is True


def test_the_probe_says_why_not(tmp_path, monkeypatch):
    assert Sandbox(tmp_path, bwrap="/bin/false").probe() is False
    box = Sandbox(tmp_path, bwrap="/bin/false")
    box.probe()
    assert box.why_not == "bubblewrap cannot create a sandbox here (exit 1)"
    noisy = tmp_path / "bwrap"
    noisy.write_text("#!/bin/sh\necho first >&2\necho 'bwrap: last words' >&2\nexit 3\n")
    noisy.chmod(0o755)
    box = Sandbox(tmp_path, bwrap=str(noisy))
    assert box.probe() is False and box.why_not == "bubblewrap cannot create a sandbox here (bwrap: last words)"
    missing = Sandbox(tmp_path, bwrap=str(tmp_path / "no-such-bwrap"))
    assert missing.probe() is False
    assert missing.why_not.startswith("bubblewrap cannot run here ([Errno 2]")
    absent = Sandbox(tmp_path, bwrap="/bin/true")
    absent.bwrap = None
    assert absent.probe() is False
    assert absent.why_not == "bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt install bubblewrap)"
    monkeypatch.setattr(sandbox_module.sys, "platform", "darwin")
    elsewhere = Sandbox(tmp_path, bwrap="/bin/true")
    assert elsewhere.probe() is False
    assert elsewhere.why_not == "commands cannot be sandboxed on this system (bubblewrap is Linux-only)"
    assert sys.platform == "darwin"  # (restored by monkeypatch after the test)


def test_the_probe_runs_the_real_command_line(tmp_path):
    """The probe runs `true` the way commands run, read-only in the workspace: a sandbox that
    works for `true` alone would prove nothing about the options commands get."""
    recorder = tmp_path / "bwrap"
    recorder.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/args"\n')
    recorder.chmod(0o755)
    box = Sandbox(tmp_path / "ws", bwrap=str(recorder))
    assert box.probe() is True
    recorded = (tmp_path / "args").read_text().splitlines()
    assert recorded == box.argv(["true"], "read-only", box.workspace)[1:]


def test_bwrap_is_found_on_path_unless_given(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text("#!/bin/sh\n")
    (bin_dir / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert Sandbox(tmp_path).bwrap == str(bin_dir / "bwrap")
    assert Sandbox(tmp_path, bwrap="/x/bwrap").bwrap == "/x/bwrap"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert Sandbox(tmp_path).bwrap is None


def test_settings_add_their_hidden_paths_and_cairns_folders(tmp_path):
    from agent.paths import config_dir, data_dir

    settings = SimpleNamespace(workspace=tmp_path, sandbox=SimpleNamespace(hide=["~/.vault"]))
    box = Sandbox.for_settings(settings)
    assert box.workspace == os.path.realpath(tmp_path)
    assert box.hide == [*SECRET_PATHS, "~/.vault"]
    assert box.own_folders == [str(data_dir()), str(config_dir())]


def test_the_probe_gives_bwrap_no_terminal_and_a_time_limit(tmp_path, monkeypatch):
    """The probe runs before the first command, maybe while the user types: bwrap must not
    read the terminal, and a bwrap that never ends must not hold the session."""
    recorder = tmp_path / "bwrap"
    recorder.write_text('#!/bin/sh\nreadlink /proc/self/fd/0 > "$(dirname "$0")/stdin"\n')
    recorder.chmod(0o755)
    assert Sandbox(tmp_path / "ws", bwrap=str(recorder)).probe() is True
    assert (tmp_path / "stdin").read_text().strip() == "/dev/null"
    stuck = tmp_path / "stuck"
    stuck.write_text("#!/bin/sh\nexec sleep 600\n")
    stuck.chmod(0o755)
    monkeypatch.setattr(sandbox_module, "PROBE_TIMEOUT_SECONDS", 0.2)
    box = Sandbox(tmp_path / "ws", bwrap=str(stuck))
    assert box.probe() is False
    assert box.why_not.startswith("bubblewrap cannot run here (Command ") and "timed out" in box.why_not


def test_the_probe_reads_any_bytes_bwrap_writes(tmp_path):
    garbled = tmp_path / "bwrap"
    garbled.write_text("#!/bin/sh\nprintf 'bwrap: \\377\\376 broken\\n' >&2\nexit 1\n")
    garbled.chmod(0o755)
    box = Sandbox(tmp_path, bwrap=str(garbled))
    assert box.probe() is False
    assert box.why_not == "bubblewrap cannot create a sandbox here (bwrap: \ufffd\ufffd broken)"


def test_the_root_as_workspace_holds_every_secret(layout):
    argv = Sandbox(Path("/"), bwrap="/x/bwrap").argv(["true"], "read-only", "/")
    binds = [i for i in range(len(argv) - 2) if argv[i : i + 3] == ["--ro-bind", "/", "/"]]
    assert len(binds) == 2  # the file system, then the workspace
    assert argv.index(str(layout.home / ".ssh")) > binds[1]  # hidden after it, inside it


def test_the_notice_says_why_and_what_asks_now(tmp_path):
    box = Sandbox(tmp_path, bwrap="/nonexistent/bwrap")
    box.why_not = "bubblewrap cannot create a sandbox here (no user namespaces)"
    assert box.unavailable_notice("workspace-write") == (
        "No sandbox: bubblewrap cannot create a sandbox here (no user namespaces). Read-only commands ask "
        'before they run, and so do commands your rules allow (sandbox.rules = "off" runs those unconfined).'
    )
    assert box.unavailable_notice("off") == (
        "No sandbox: bubblewrap cannot create a sandbox here (no user namespaces). Read-only commands ask "
        'before they run; commands your rules allow run unconfined (sandbox.rules = "off").'
    )
