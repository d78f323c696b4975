"""Slash commands: one module per command, registered in `COMMANDS`.

Adding a command = write a module exposing a `Command` and add one line to `COMMANDS`.
Handlers receive the app and the text after the command name; they talk to the
runtime only through the app (which owns it), never to the store or the loop.

Project commands (`.cairn/commands/*.md`, agent/settings/project_commands.py) join the built-in
ones in completion and /help; a built-in wins over a project command of the same name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.app import App

    from agent.settings.project_commands import ProjectCommand
    from agent.ui.app import CairnApp

Handler = Callable[["CairnApp", str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str  # without the slash
    description: str
    handler: Handler
    usage: str = ""  # e.g. "[name]"; empty means the command takes no arguments
    aliases: tuple[str, ...] = field(default_factory=tuple)
    project: bool = False  # from .cairn/commands/ (or the user's commands folder)

    @property
    def takes_args(self) -> bool:
        return bool(self.usage)


def _registry() -> list[Command]:
    # Imported here so each command module can import this one for `Command`.
    from agent.ui.commands import (
        agents,
        compact,
        context,
        cost,
        effort,
        export,
        fork,
        help,
        init,
        mcp,
        model,
        new,
        quit,
        rename,
        resume,
        skills,
        status,
    )

    return [
        help.COMMAND,
        new.COMMAND,
        model.COMMAND,
        effort.COMMAND,
        context.COMMAND,
        cost.COMMAND,
        compact.COMMAND,
        init.COMMAND,
        resume.COMMAND,
        rename.COMMAND,
        fork.COMMAND,
        export.COMMAND,
        mcp.COMMAND,
        agents.COMMAND,
        skills.COMMAND,
        status.COMMAND,
        quit.COMMAND,
    ]


_COMMANDS: list[Command] | None = None


def commands() -> list[Command]:
    global _COMMANDS
    if _COMMANDS is None:
        _COMMANDS = _registry()
    return _COMMANDS


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


# -- project commands ---------------------------------------------------------------------
def _workspace(app: App, loaded_only: bool) -> Path | None:
    """The app's workspace. With `loaded_only`, None until the settings are loaded: reading
    command files needs pydantic, which must not be imported on a keystroke at start-up."""
    settings = getattr(app, "settings", None)
    if settings is not None:
        return settings.workspace
    if loaded_only:
        return None
    workspace = getattr(app, "_settings_source", (None, None))[0]
    return (workspace or Path.cwd()).resolve()


def _as_command(found: ProjectCommand) -> Command:
    from agent.settings.project_commands import ARGUMENTS, expand

    async def run(app: CairnApp, args: str) -> None:
        app.send_prompt(f"/{found.name} {args}".strip(), expand(found, args))

    return Command(
        found.name, found.description, run, usage="[arguments]" if ARGUMENTS in found.body else "", project=True
    )


def project_commands(app: App) -> list[Command]:
    """The project commands no built-in shadows, sorted by name (for completion and /help)."""
    workspace = _workspace(app, loaded_only=True)
    if workspace is None:
        return []
    from agent.settings.project_commands import list_commands

    return [_as_command(c) for c in list_commands(workspace) if find(c.name) is None]


def find_for(app: CairnApp, name: str) -> Command | None:
    """A built-in command, else the project command called `name` (only its file is read)."""
    command = find(name)
    if command is not None:
        return command
    workspace = _workspace(app, loaded_only=False)
    if workspace is None:
        return None
    from agent.settings.project_commands import find_command

    found = find_command(workspace, name)
    return _as_command(found) if found is not None else None


def matching_for(app: App, prefix: str) -> list[Command]:
    """Built-in commands matching `prefix`, then the matching project commands."""
    prefix = prefix.lower()
    return matching(prefix) + [c for c in project_commands(app) if c.name.startswith(prefix)]
