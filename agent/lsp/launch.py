"""How a language server is started: in cairn's sandbox, or not at all.

A server cairn starts unasked runs the repository's code: typescript-language-server loads the
project's `node_modules/typescript`, rust-analyzer runs build scripts and proc macros, gopls runs
`go list` (a go.mod may name a toolchain to fetch), pylsp loads plugins and reads setup.cfg and
pyproject.toml. So it runs where a read-only command runs (agent/tools/sandbox.py): the file
system read-only, the workspace too, no network, the user's secrets and cairn's folders hidden,
a private /tmp (its caches go there), its own process group. Its environment has no provider
key and nothing that looks like a secret. Where no sandbox can be made, servers are not
started unless the user's config says `[lsp] unsandboxed = true` (a project's only once trusted).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from agent.process.secrets import command_environment
from agent.tools.program_roots import VENV_MARKER
from agent.tools.sandbox import Sandbox, secret_variable

# Inside the sandbox's private /tmp: the one place a server may write its caches.
SANDBOX_CACHE = "/tmp/.cache"


class NoSandbox(Exception):
    """Servers cannot be sandboxed here and the user did not allow them outside; says why."""


async def server_command(
    argv: list[str], workspace: Path, sandbox: Sandbox | None, *, unsandboxed: bool
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that start `argv` for `workspace`. Raises NoSandbox."""
    env = {k: v for k, v in command_environment(dict(os.environ)).items() if not secret_variable(k)}
    if unsandboxed:
        return argv, env
    if sandbox is None:
        raise NoSandbox("no sandbox was set up for this session")
    if not await asyncio.to_thread(sandbox.probe):
        raise NoSandbox(sandbox.why_not)
    env = sandbox.environment(env)
    env["XDG_CACHE_HOME"] = SANDBOX_CACHE
    return sandbox.argv(argv, "read-only", workspace, visible=installation(argv[0])), env


def installation(program: str) -> list[str]:
    """The folder the server is installed in: its virtualenv (the folder with `pyvenv.cfg`
    above the executable), else the folder above its `bin/`. The sandbox shows it read-only
    when it lies in a private folder (a CI clone's virtualenv under /tmp)."""
    found = shutil.which(program)
    if found is None:
        return []
    for path in dict.fromkeys((os.path.abspath(found), os.path.realpath(found))):
        folder = os.path.dirname(path)
        while folder != os.path.dirname(folder):
            if os.path.isfile(os.path.join(folder, VENV_MARKER)):
                return [folder]
            folder = os.path.dirname(folder)
    return [os.path.dirname(os.path.dirname(os.path.realpath(found)))]


def can_start(sandbox: Sandbox | None, unsandboxed: bool) -> bool:
    """Without probing (the session is opening): whether a server could start at all."""
    return unsandboxed or (sandbox is not None and sandbox.bwrap is not None and sandbox.available is not False)
