"""/fork: copy this session's active path into a new session and continue there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.runtime.ops import Fork
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    from agent.ui.sessions import BUSY

    if app.runtime is None:
        app.notice_not_ready()
        return
    if app.turn_running:
        app.chat.add_notice(BUSY, kind="warning")
        return
    fork = await app.runtime.submit(Fork())
    app.refresh_status()  # same history on screen: only the title changes
    app.chat.add_notice(f"Forked into {fork.id[:8]} — the original session is unchanged")


COMMAND = Command("fork", "continue in a copy of this session", run)
