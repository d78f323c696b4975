"""Slash commands: one module per command, registered in `_registry()`.

Adding a command = write a module exposing a `Command` (agent/ui/commands/command.py) and
add one line to `_registry()`. Handlers receive the app as a `Host` (agent/ui/host.py) and
the text after the command name; they talk to the runtime only through the app (which owns
it), never to the store or the loop.

Command files (`.claude/commands/`, `.cairn/commands/`, the user's) and skills
(agent/commands/) join the built-in ones in completion and /help, with their description and
argument hint; a built-in wins over one of the same name. Running one sends what was typed:
the runtime expands it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.commands.invocation import CommandSource, Listed
    from agent.ui.host import Host


def _registry() -> tuple[Command, ...]:
    # Imported when first asked for: the commands' modules stay off the path to the first frame.
    from agent.ui.commands import (
        agents,
        compact,
        context,
        copy,
        cost,
        effort,
        export,
        fork,
        help,
        init,
        mcp,
        memory,
        model,
        new,
        quit,
        rename,
        resume,
        skills,
        status,
        tasks,
    )

    return (
        help.command(help_rows),
        new.COMMAND,
        model.COMMAND,
        effort.COMMAND,
        context.COMMAND,
        cost.COMMAND,
        compact.COMMAND,
        init.COMMAND,
        memory.COMMAND,
        resume.COMMAND,
        rename.COMMAND,
        fork.COMMAND,
        export.COMMAND,
        copy.COMMAND,
        mcp.COMMAND,
        agents.COMMAND,
        skills.COMMAND,
        tasks.COMMAND,
        status.COMMAND,
        quit.COMMAND,
    )


@functools.cache
def commands() -> tuple[Command, ...]:
    """The built-in commands, in the order completion and /help show them."""
    return _registry()


def find(name: str) -> Command | None:
    """The command called `name` (or with that alias), without the leading slash."""
    name = name.lower()
    for command in commands():
        if command.name == name or name in command.aliases:
            return command
    return None


def matching(prefix: str) -> list[Command]:
    """Commands whose name or alias starts with `prefix` (no slash), in registry order."""
    prefix = prefix.lower()
    return [c for c in commands() if c.name.startswith(prefix) or any(a.startswith(prefix) for a in c.aliases)]


def parse(text: str) -> tuple[str, str] | None:
    """Split "/name args" into (name, args); None when the text is not a slash command."""
    text = text.strip()
    if not text.startswith("/") or len(text) < 2 or text[1].isspace():
        return None
    name, _, args = text[1:].partition(" ")
    if "/" in name:  # a path such as /usr/bin is a prompt, not a command
        return None
    return name, args.strip()


# -- command files and skills ------------------------------------------------------------
def _loaded_workspace(app: object) -> Path | None:
    """The app's workspace, None until the settings are loaded: reading command files needs
    pydantic, which must not be imported on a keystroke at start-up."""
    settings = getattr(app, "settings", None)
    return settings.workspace if settings is not None else None


def _sources(app: object, workspace: Path) -> list[CommandSource]:
    """The runtime's command sources as the app sees them: the workspace's files, and the
    skills once the runtime is open (agent/commands/invocation.py)."""
    from agent.commands.invocation import command_sources

    runtime = getattr(app, "runtime", None)
    more = runtime.mcp_commands() if runtime is not None else []  # MCP prompts (agent/mcp/commands.py)
    return command_sources(workspace, runtime.skills() if runtime is not None else None, *more)


def _as_command(found: Listed) -> Command:
    async def run(app: Host, args: str) -> None:
        app.send_prompt(f"/{found.name} {args}".strip())  # the runtime expands it (agent/runtime/command_turn.py)

    return Command(found.name, found.description, run, usage=found.argument_hint, project=True)


def project_commands(app: object) -> list[Command]:
    """The command files and skills no built-in shadows, sorted by name (for completion and /help)."""
    workspace = _loaded_workspace(app)
    if workspace is None:
        return []
    from agent.commands.invocation import listing

    return [_as_command(c) for c in listing(_sources(app, workspace)) if find(c.name) is None]


def find_for(app: Host, name: str) -> Command | None:
    """A built-in command, else the command file or skill called `name` (only its file is read)."""
    command = find(name)
    if command is not None:
        return command
    from agent.commands.invocation import Listed

    for source in _sources(app, app.workspace):
        if source.find(name, []) is not None:
            return _as_command(Listed(name.lower(), ""))
    return None


def matching_for(app: object, prefix: str) -> list[Command]:
    """Built-in commands matching `prefix`, then the matching command files and skills."""
    prefix = prefix.lower()
    return matching(prefix) + [c for c in project_commands(app) if c.name.startswith(prefix)]


# -- /help ------------------------------------------------------------------------------------
def help_rows(app: object | None = None) -> list[tuple[str, int]]:
    """Each line of /help and the column its description starts at: the built-in commands,
    the app's project commands (none without an app) and the files not used, the keys."""
    from agent.ui.commands import help

    project = project_commands(app) if app is not None else []
    return help.listing_rows(commands(), project, help.skipped_commands(app))


def help_text(app: object | None = None) -> str:
    return "\n".join(line for line, _ in help_rows(app))
