"""The sandbox for commands cairn runs without asking (SPEC §13.1): bubblewrap on Linux.

A parse of a command line proves what the command *says*, not what the program will do with
the files around it: git, less, man, `rg --pre` and many others run programs a repository's
configuration names. So whatever runs unasked runs where it cannot do harm: the whole file
system read-only (the workspace too for read-only commands; writable, but its `.git` hooks
and config and `.cairn`, for commands a user rule allows), a private `/tmp` and `/run`, no
network, no other processes to see, no capabilities, the user's secrets and cairn's own data
and config folders replaced by empty ones. The command's process group is bwrap's, so a
timeout or Esc kills it as before; `--die-with-parent` and the PID namespace take every
process inside down with it.

Where bwrap is missing, or cannot create namespaces (some containers), nothing runs
unasked: `Sandbox.probe` finds out once, and `why_not` says so in words.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from agent.fs.repo_files import within

SandboxMode = Literal["read-only", "workspace-write"]

# Hidden from every sandboxed command (those that exist; `~` is the user's home). Others
# come from `[sandbox] hide`.
SECRET_PATHS = (
    "~/.ssh",
    "~/.aws",
    "~/.config/gcloud",
    "~/.netrc",
    "~/.git-credentials",
    "~/.gnupg",
    "~/.docker",
    "~/.kube",
    "~/.azure",
    "~/.config/gh",
    "~/.pypirc",
    "~/.npmrc",
    "~/.cargo/credentials.toml",
    "~/.cargo/credentials",
    "~/.config/hub",
    "~/.password-store",
    "~/.local/share/keyrings",
)
# Replaced by empty folders: sockets of the user's agents and daemons live there (ssh-agent,
# D-Bus, Docker's socket); a filesystem socket ignores the network namespace.
PRIVATE_FOLDERS = ("/tmp", "/run", "/var/run", "/dev/shm")
# Inside a writable workspace these stay read-only: what they hold runs later, outside any
# sandbox (git hooks and config, cairn's project config and commands).
PROTECTED_IN_WORKSPACE = (".git/hooks", ".git/config", ".git/info", ".git/config.worktree", ".cairn")
PROBE_TIMEOUT_SECONDS = 10.0


def _expand(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


class Sandbox:
    """The machine's sandbox for one workspace: probed once, then wraps commands.

    Owned by the session's `Permissions` (which decides what may run unasked) and used by
    `terminal-execute` (which runs it)."""

    def __init__(
        self, workspace: Path, *, hide: Iterable[str] = (), own_folders: Iterable[Path] = (), bwrap: str | None = None
    ) -> None:
        self.workspace = os.path.realpath(workspace)
        self.hide = [*SECRET_PATHS, *hide]
        self.own_folders = [str(p) for p in own_folders]
        self.bwrap = bwrap if bwrap is not None else shutil.which("bwrap")
        self._lock = threading.Lock()
        self._available: bool | None = None
        self.why_not = ""

    @classmethod
    def for_settings(cls, settings) -> Sandbox:
        """The sandbox `settings` describe: their workspace and `[sandbox] hide`."""
        return cls.for_folder(settings.workspace, hide=settings.sandbox.hide)

    @classmethod
    def for_folder(cls, workspace: Path, *, hide: Iterable[str] = ()) -> Sandbox:
        """The sandbox of a session in `workspace`: cairn's own data and config folders hidden."""
        from agent.paths import config_dir, data_dir

        return cls(workspace, hide=hide, own_folders=[data_dir(), config_dir()])

    # -- availability -------------------------------------------------------------------
    @property
    def available(self) -> bool | None:
        """True/False once probed; None before."""
        return self._available

    def probe(self) -> bool:
        """Whether a sandboxed command can run here (blocking; once, then remembered)."""
        with self._lock:
            if self._available is None:
                self._available, self.why_not = self._try()
            return self._available

    def _try(self) -> tuple[bool, str]:
        if not sys.platform.startswith("linux"):
            return False, "commands cannot be sandboxed on this system (bubblewrap is Linux-only)"
        if self.bwrap is None:
            return False, "bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt install bubblewrap)"
        try:
            done = subprocess.run(
                self.argv(["true"], "read-only", self.workspace),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT_SECONDS,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"bubblewrap cannot run here ({exc})"
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return False, f"bubblewrap cannot create a sandbox here ({said[-1] if said else f'exit {done.returncode}'})"
        return True, ""

    def unavailable_notice(self, rules: str) -> str:
        """What the user is told once when the probe failed: why, and what runs unasked now
        (`rules`: the `[sandbox] rules` setting)."""
        if rules == "off":
            then = '; commands your rules allow run unconfined (sandbox.rules = "off").'
        else:
            then = ', and so do commands your rules allow (sandbox.rules = "off" runs those unconfined).'
        return f"No sandbox: {self.why_not}. Read-only commands ask before they run{then}"

    # -- the command --------------------------------------------------------------------
    def hidden(self) -> list[str]:
        """Real paths of the secrets and cairn folders that exist (a symlink's target too)."""
        out: list[str] = []
        for raw in [*self.hide, *self.own_folders]:
            for path in {os.path.abspath(os.path.expanduser(raw)), _expand(raw)}:
                if os.path.lexists(path) and not os.path.islink(path) and path not in out:
                    out.append(path)
        return out

    def argv(self, command: list[str], mode: SandboxMode, cwd: str | Path) -> list[str]:
        """bwrap's command line running `command` in `cwd` under `mode`."""
        assert self.bwrap is not None
        ws = self.workspace
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for folder in PRIVATE_FOLDERS:
            if os.path.isdir(folder) and not os.path.islink(folder):
                args += ["--tmpfs", folder]
        hidden = self.hidden()
        # Secrets outside the workspace first: the workspace is mounted over them if it lies
        # inside one (a project in ~/.config/…), those inside it after it.
        outside = [p for p in hidden if not within(p, ws)]
        inside = [p for p in hidden if within(p, ws) and p != ws]
        args += self._hide(outside)
        args += ["--bind" if mode == "workspace-write" else "--ro-bind", ws, ws]
        if mode == "workspace-write":
            for rel in PROTECTED_IN_WORKSPACE:
                path = os.path.join(ws, rel)
                if os.path.lexists(path) and not os.path.islink(path):
                    args += ["--ro-bind", path, path]
        args += self._hide(inside)
        args += ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--chdir", str(cwd), "--", *command]
        return args

    @staticmethod
    def _hide(paths: list[str]) -> list[str]:
        args: list[str] = []
        for path in paths:
            if os.path.isdir(path):
                args += ["--tmpfs", path]
            else:
                args += ["--ro-bind", "/dev/null", path]
        return args

    @staticmethod
    def environment(env: dict[str, str]) -> dict[str, str]:
        """What a sandboxed command gets: `env` with its temporary folder in the private /tmp."""
        out = {k: v for k, v in env.items() if k not in ("TMPDIR", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS")}
        out["TMPDIR"] = "/tmp"
        return out
