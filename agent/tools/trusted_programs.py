"""The workspace files cairn runs outside the sandbox later, which the sandbox keeps read-only.

A hook runs at each event and an MCP server at each start, unconfined. Trust pins the files
their command lines execute (agent/settings/run_files.py, agent/settings/pins.py), so an edit
makes cairn ask again; on top of that, a sandboxed command (a test script a rule allowed) must
not be able to rewrite them at all: `Permissions` passes this list as the sandbox's `protect`
(agent/tools/sandbox.py binds it read-only), and a command that needs to write there fails
inside and escalates like any other write the sandbox refuses.

The list covers what runs now and what would run once trusted: the user's and the trusted
project's hooks and MCP servers (settings), the user's Claude Code hooks when opted in, and
every program the project's `.cairn/config.toml`, `.mcp.json` and `.claude/settings*.json`
list, trusted or not, so that nothing can be planted in a script before the user trusts it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any


def trusted_program_files(settings: Any) -> list[Path]:
    """The workspace files the hooks and MCP servers of `settings` (and of the project's own
    files, trusted or not) execute, sorted."""
    from agent.hooks.sources import claude_specs, load_specs, project_claude_hooks
    from agent.mcp.servers import read_mcp_json, server_specs
    from agent.settings import trust
    from agent.settings.project_source import project_programs
    from agent.settings.run_files import UncheckableCommand, executed_files

    workspace = Path(settings.workspace)
    commands: list[tuple[Any, Path]] = []
    hooks, _ = load_specs(settings)
    commands += [(spec.command, workspace) for spec in hooks]
    mcp_json = read_mcp_json(workspace)
    servers, _ = server_specs(settings, mcp_json=mcp_json)
    commands += [
        (trust.server_argv(spec.model_dump()), Path(spec.cwd or workspace)) for spec in servers if spec.command
    ]
    commands += [(program.command, program.cwd) for program in project_programs(workspace)]
    if mcp_json is not None:
        commands += [(trust.server_argv(cfg), workspace / (cfg.cwd or ".")) for cfg in mcp_json.servers.values()]
    for name, table in project_claude_hooks(workspace, []).items():
        commands += [(spec.command, workspace) for spec in claude_specs(table, name, [])]
    found: set[Path] = set()
    for command, cwd in commands:
        with contextlib.suppress(UncheckableCommand):  # too big to tell: a project never gets it trusted
            found.update(executed_files(command, cwd=cwd, workspace=workspace))
    return sorted(found)


def workspace_program_files(workspace: Path) -> list[Path]:
    """`trusted_program_files` of the settings a session in `workspace` loads."""
    from agent.settings.config import load_settings

    return trusted_program_files(load_settings(workspace))
