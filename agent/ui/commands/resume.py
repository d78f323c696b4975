"""/resume (or /sessions): the session picker — filter, open, delete."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    from agent.ui import sessions

    sessions.start(app, sessions.pick_session)  # a worker: the flow awaits the picker


COMMAND = Command("resume", "pick a session to open: filter, Enter, Ctrl+D to delete", run, aliases=("sessions",))
