"""`!command` in the prompt: the rest of the line runs in the user's shell, as they typed it.

No approval (it is the user's own command) and no model call: the runtime runs it in the
workspace without cairn's keys (agent/runtime/shell.py) and stores its output as a note the
model reads with the next prompt. It runs in the turn worker (agent/ui/turns.py), so Esc or
Ctrl+C stops it and what is sent meanwhile is queued. Sent while a turn runs, it is queued
like a prompt (its note would otherwise land in the middle of the turn) and runs on its own
once the turn ends, before what was queued after it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agent.runtime.ops import Shell
from agent.ui.widgets.prompt import SHELL_PREFIX
from agent.ui.widgets.shell_block import ShellBlock

if TYPE_CHECKING:
    from agent.runtime.runtime import Runtime
    from agent.ui.host import Host
    from agent.ui.widgets.chat import ChatView


def is_shell(text: str) -> bool:
    return text.startswith(SHELL_PREFIX)


def submit(app: Host, text: str) -> None:
    """A prompt starting with `!`: run the rest, if anything and if nothing else runs."""
    command = text[len(SHELL_PREFIX) :].strip()
    if not command:
        app.chat.add_notice("Type a command after !, e.g. !git status", kind="warning")
        return
    if app.turn_running:
        app.send_prompt(text)  # queued: it runs after this turn (agent/ui/turns.py _send_queued)
        return
    if app.runtime is None:
        app.prompt.restore(text)
        app.notice_not_ready()
        return
    app.start_shell(command)


async def run_in_chat(chat: ChatView, runtime: Runtime, command: str) -> None:
    """Show the command and its output as it arrives; the runtime stores the note."""
    from agent.runtime.shell import SHELL_META, shown_streams

    block = ShellBlock(command)
    chat.add_block(block)
    try:
        message = await runtime.submit(Shell(command, on_output=block.add_output))
    except asyncio.CancelledError:
        block.stop("interrupted")  # stopped before it ran
        raise
    except Exception:
        block.stop("not run")
        raise
    block.finish(*shown_streams(message), message.meta.get(SHELL_META) or {})
