"""The sandbox for commands cairn runs without asking (SPEC §13.1): bubblewrap on Linux.

A parse of a command line proves what the command *says*, not what the program will do with
the files around it: git, less, man, `rg --pre` and many others run programs a repository's
configuration names. So whatever runs unasked runs where it cannot do harm: the whole file
system read-only (the workspace too for read-only commands; writable for commands a user rule
allows, but for what runs later outside any sandbox: agent/tools/sandbox_protect.py), a
private `/tmp` and `/run`, no network, no other processes to see, no capabilities, the user's
secrets and cairn's own data and config folders replaced by empty ones, and no variable that
looks like a secret in its environment (`[sandbox] env_passthrough` keeps those the user
names). The command's process group is bwrap's, so a timeout or Esc kills it as before;
`--die-with-parent` and the PID namespace take every process inside down with it.

Where bwrap is missing, or cannot create namespaces (some containers), nothing runs
unasked: `Sandbox.probe` finds out once, and `why_not` says so in words.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from agent.fs.repo_files import within
from agent.tools.sandbox_protect import Protection

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
# Variables a sandboxed command does not get (matched on the upper-cased name): keys, tokens,
# passwords and credentials of every provider, as named by convention. The repository's
# code has no business with them, and a command that needs one is run outside, asked.
SECRET_VARIABLE_PATTERNS = (
    "*_TOKEN",
    "*_TOKEN_*",
    "*SECRET*",
    "*_KEY",
    "*_KEYS",
    "*_KEY_ID",
    "*APIKEY*",
    "*API_KEY*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PWD",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*_PAT",
    "*_AUTH",
)
# Well-known secrets the patterns above miss (a database URL carries its password).
SECRET_VARIABLES = frozenset({"TOKEN", "DATABASE_URL", "DOCKER_AUTH_CONFIG"})
# Sockets of the user's agents (their folders are private inside) and the temporary folder.
DROPPED_VARIABLES = ("TMPDIR", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS")
PROBE_TIMEOUT_SECONDS = 10.0


def _expand(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def secret_variable(name: str, passthrough: Iterable[str] = ()) -> bool:
    """Whether a sandboxed command must not see variable `name`: it looks like a secret and
    the user did not keep it (`passthrough`: names or fnmatch patterns, as written)."""
    if any(fnmatch.fnmatchcase(name, kept) for kept in passthrough):
        return False
    upper = name.upper()
    return upper in SECRET_VARIABLES or any(fnmatch.fnmatchcase(upper, p) for p in SECRET_VARIABLE_PATTERNS)


class Sandbox:
    """The machine's sandbox for one workspace: probed once, then wraps commands.

    Owned by the session's `Permissions` (which decides what may run unasked) and used by
    `terminal-execute` (which runs it)."""

    def __init__(
        self,
        workspace: Path,
        *,
        hide: Iterable[str] = (),
        own_folders: Iterable[Path] = (),
        bwrap: str | None = None,
        protect: Iterable[str | Path] = (),
        env_passthrough: Iterable[str] = (),
    ) -> None:
        """`protect`: more paths inside the workspace a writable sandbox keeps read-only (the
        files trusted hooks and MCP servers execute); `env_passthrough`: secret-looking
        variables the user lets sandboxed commands see (`[sandbox] env_passthrough`)."""
        self.workspace = os.path.realpath(workspace)
        self.hide = [*SECRET_PATHS, *hide]
        self.own_folders = [str(p) for p in own_folders]
        self.bwrap = bwrap if bwrap is not None else shutil.which("bwrap")
        self.protection = Protection(self.workspace, protect)
        self.env_passthrough = list(env_passthrough)
        self._lock = threading.Lock()
        self._available: bool | None = None
        self.why_not = ""

    @classmethod
    def for_settings(cls, settings, protect: Iterable[str | Path] = ()) -> Sandbox:
        """The sandbox `settings` describe: their workspace, `[sandbox] hide` and `env_passthrough`."""
        return cls.for_folder(
            settings.workspace,
            hide=settings.sandbox.hide,
            protect=protect,
            env_passthrough=getattr(settings.sandbox, "env_passthrough", ()),
        )

    @classmethod
    def for_folder(
        cls,
        workspace: Path,
        *,
        hide: Iterable[str] = (),
        protect: Iterable[str | Path] = (),
        env_passthrough: Iterable[str] = (),
    ) -> Sandbox:
        """The sandbox of a session in `workspace`: cairn's own data and config folders hidden."""
        from agent.paths import config_dir, data_dir

        return cls(
            workspace,
            hide=hide,
            own_folders=[data_dir(), config_dir()],
            protect=protect,
            env_passthrough=env_passthrough,
        )

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

    def argv(self, command: list[str], mode: SandboxMode, cwd: str | Path, *, visible: Sequence[str] = ()) -> list[str]:
        """bwrap's command line running `command` in `cwd` under `mode`. `visible`: folders of
        the program's own installation that lie in a private folder (a virtualenv under /tmp),
        shown read-only again over it, or the program would not be found."""
        assert self.bwrap is not None
        ws = self.workspace
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for folder in PRIVATE_FOLDERS:
            if os.path.isdir(folder) and not os.path.islink(folder):
                args += ["--tmpfs", folder]
        for folder in visible:
            if any(within(folder, private) for private in PRIVATE_FOLDERS) and os.path.isdir(folder):
                args += ["--ro-bind", folder, folder]
        hidden = self.hidden()
        # Secrets outside the workspace first: the workspace is mounted over them if it lies
        # inside one (a project in ~/.config/…), those inside it after it.
        outside = [p for p in hidden if not within(p, ws)]
        inside = [p for p in hidden if within(p, ws) and p != ws]
        args += self._hide(outside)
        args += ["--bind" if mode == "workspace-write" else "--ro-bind", ws, ws]
        if mode == "workspace-write":
            args += self.protection.bind_args()
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

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """What a sandboxed command gets: `env` without the variables that look like secrets
        (but those `env_passthrough` keeps), its temporary folder in the private /tmp."""
        out = {
            k: v for k, v in env.items() if k not in DROPPED_VARIABLES and not secret_variable(k, self.env_passthrough)
        }
        out["TMPDIR"] = "/tmp"
        return out
