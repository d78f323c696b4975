"""/rename <title>: set the open session's title (shown in the status bar and the picker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.runtime.ops import Rename
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    title = " ".join(args.split())
    if not title:
        app.chat.add_notice("Usage: /rename <title>", kind="warning")
        return
    if app.runtime is None:
        app.notice_not_ready()
        return
    session = await app.runtime.submit(Rename(title))
    app.refresh_status()
    app.chat.add_notice(f"Session renamed to “{session.title}”")


COMMAND = Command("rename", "set the session's title", run, usage="<title>")
