"""/quit (or /exit): leave cairn; the session is already saved."""

from __future__ import annotations

from agent.ui.commands import Command


async def run(app, args: str) -> None:
    await app.quit_app()


COMMAND = Command("quit", "exit cairn", run, aliases=("exit",))
