"""Slash commands: one module per command, registered in `COMMANDS`.

Adding a command = write a module exposing a `Command` and add one line to `COMMANDS`.
Handlers receive the app and the text after the command name; they talk to the
runtime only through the app (which owns it), never to the store or the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable

if TYPE_CHECKING:
    from agent.ui.app import CairnApp

Handler = Callable[["CairnApp", str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str  # without the slash
    description: str
    handler: Handler
    usage: str = ""  # e.g. "[name]"; empty means the command takes no arguments
    aliases: tuple[str, ...] = field(default_factory=tuple)

    @property
    def takes_args(self) -> bool:
        return bool(self.usage)


def _registry() -> list[Command]:
    # Imported here so each command module can import this one for `Command`.
    from agent.ui.commands import context, export, fork, help, model, new, quit, rename, resume

    return [
        help.COMMAND,
        new.COMMAND,
        model.COMMAND,
        context.COMMAND,
        resume.COMMAND,
        rename.COMMAND,
        fork.COMMAND,
        export.COMMAND,
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
