"""/compact [instructions]: condense the conversation now (SPEC §5), e.g. before a new subtask.

It runs like a turn — status spinner, Esc interrupts — because it is one: a model call
that can take a while. The chat shows the marker (or the reason it could not condense).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    if app.still_working(f"/compact {args}".strip()):
        return
    app.start_compact(args.strip() or None)


COMMAND = Command("compact", "condense the conversation into a summary now", run, usage="[instructions]")
