"""/quit (or /exit): leave cairn; the session is already saved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    await app.quit_app()


COMMAND = Command("quit", "exit cairn", run, aliases=("exit",))
