"""What a slash command is: its name, its words for completion and /help, its handler.

Apart from the registry (agent/ui/commands/__init__.py) because every command module
builds one and the registry imports every command module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.ui.host import Host

Handler = Callable[["Host", str], Awaitable[None]]  # (the app, the text after the command's name)


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
