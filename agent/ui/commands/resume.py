"""/resume (or /sessions): the session picker — filter, open, delete."""

from __future__ import annotations

from agent.ui.commands import Command


async def run(app, args: str) -> None:
    from agent.ui import sessions

    sessions.start(app, sessions.pick_session)  # a worker: the flow awaits the picker


COMMAND = Command("resume", "pick a session to open: filter, Enter, Ctrl+D to delete", run, aliases=("sessions",))
