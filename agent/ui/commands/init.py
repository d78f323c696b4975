"""/init: the model studies the project and writes or updates AGENTS.md.

The instructions are a prompt beside this module (init.md, package data), sent as a
`<command name="init">` block as command files are (agent/commands/invocation.py):
the chat shows `/init`, a resumed chat too, and a condense keeps the block while it is being
worked on. The model writes with filesystem-create / filesystem-edit, so each write asks
for approval through the normal permissions (in plan mode it is refused, as any edit is).
Words after `/init` go with it (e.g. `/init focus on the test setup`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host

PROMPT_FILE = Path(__file__).with_name("init.md")


def init_prompt(args: str) -> str:
    """What the model gets: the prompt file in a `<command>` block, `args` after it."""
    from agent.commands.invocation import expand_body

    return expand_body("init", PROMPT_FILE.read_text(encoding="utf-8").strip(), args)


async def run(app: Host, args: str) -> None:
    app.send_prompt(f"/init {args}".strip(), init_prompt(args))


DESCRIPTION = "study the project and write or update AGENTS.md (asks before it writes)"
COMMAND = Command("init", DESCRIPTION, run, usage="[focus]")
