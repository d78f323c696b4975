"""/new (or /clear, Claude Code's name): start a fresh session in this folder (the old one
stays in the log, for /resume)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.runtime.ops import NewSession
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    if app.turn_running:
        app.chat.add_notice("A turn is running: press Esc to interrupt it first.", kind="warning")
        return
    await app.runtime.submit(NewSession())
    app.chat.clear_messages()
    app.todo_panel.clear()
    app.status.reset_session()
    app.refresh_status()


COMMAND = Command("new", "start a new session", run, aliases=("clear",))
