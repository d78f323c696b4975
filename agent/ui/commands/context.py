"""/context: what the next request holds — system prompt, tools, messages, pass by pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    from agent.context.inspect import format_report

    report = await app.runtime.context_report()
    app.chat.add_notice(format_report(report), kind="help")


COMMAND = Command("context", "show what the next request holds, pass by pass", run)
