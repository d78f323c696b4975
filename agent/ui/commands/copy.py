"""/copy [N]: the last answer, or its N-th code block, to the clipboard without the mouse.

Two ways at once, and the notice says which took it: OSC 52 through Textual's driver
(`App.copy_to_clipboard`, which also keeps `app.clipboard`), which works over SSH where the
terminal allows it, and the desktop's clipboard tool when there is one (agent/ui/clipboard.py).
Inside tmux OSC 52 reaches the clipboard only with `set-clipboard on`: the notice says so
when no tool took the text either.

The answer is the model's, so it is copied only when the user types the command, and as the
chat shows it: made inert (agent/fs/terminal_text.py), so a hidden ESC or bidi control cannot
ride along into a terminal or an editor it is pasted into (a `ESC [ 201 ~` would end a shell's
bracketed paste early and run the rest). OSC 52 carries it in base64, the tool gets it on stdin.
Code blocks are counted as the chat's own parser finds them (agent/ui/widgets/answer_markdown.py),
fenced or indented; a block is copied without its fences or its last line end, so that pasting
a command does not run it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.runtime.runtime import Runtime
    from agent.session.models import Message
    from agent.ui.host import Host

ANSWER_LOOKBACK = 64  # newest messages searched for the last answer before the whole history is read
USAGE = "Usage: /copy [N]: the last answer, or its N-th code block"


def last_answer(messages: list[Message]) -> str | None:
    """The text of the newest assistant message that has some (one that only called tools has none)."""
    for message in reversed(messages):
        if message.role == "assistant" and message.kind == "message" and (message.content or "").strip():
            return message.content
    return None


def code_blocks(answer: str) -> list[str]:
    """The answer's code blocks in order, as the chat draws them: their code only."""
    from agent.ui.widgets.answer_markdown import text_only_markdown

    tokens = text_only_markdown().parse(answer)
    return [token.content.rstrip("\n") for token in tokens if token.type in ("fence", "code_block")]


def _blocks_are(count: int) -> str:
    if count == 0:
        return "The last answer has no code blocks: /copy copies all of it."
    if count == 1:
        return "The last answer has 1 code block: /copy 1 copies it."
    return f"The last answer has {count} code blocks: /copy 1 to /copy {count} copy one."


def how_copied(tool: str | None, failure: str | None, in_tmux: bool) -> str:
    """The end of the notice: which ways took the text."""
    if tool and not failure:
        return f"with OSC 52 and {tool}."
    hint = "your terminal must allow it" + ("; tmux needs `set -g set-clipboard on`" if in_tmux else "")
    if tool:
        return f"with OSC 52 only ({hint}): {tool} failed ({failure})."
    return f"with OSC 52 ({hint})."


async def _find_answer(runtime: Runtime) -> str | None:
    tail = await runtime.history_tail(ANSWER_LOOKBACK)
    answer = last_answer(tail)
    if answer is None and len(tail) >= ANSWER_LOOKBACK:
        answer = last_answer(await runtime.history())
    return answer


def block_number(args: str) -> int | None:
    """0 for the whole answer, N for `/copy N`; None when the words are not that."""
    words = args.split()
    if not words:
        return 0
    if len(words) == 1 and words[0].isascii() and words[0].isdigit() and int(words[0]) >= 1:
        return int(words[0])
    return None


async def run(app: Host, args: str) -> None:
    number = block_number(args)
    if number is None:
        app.chat.add_notice(USAGE, kind="warning")
        return
    if app.runtime is None:
        app.notice_not_ready()
        return
    answer = await _find_answer(app.runtime)
    if answer is None:
        app.chat.add_notice("Nothing to copy yet: no answer in this session.", kind="warning")
        return
    from agent.fs.terminal_text import inert

    text, what = inert(answer), "the last answer"
    if number:
        blocks = code_blocks(text)
        if number > len(blocks):
            app.chat.add_notice(_blocks_are(len(blocks)), kind="warning")
            return
        text, what = blocks[number - 1], f"code block {number} of the last answer"

    from agent.ui.clipboard import ToolFailed, copy_with, find_tool

    app.copy_to_clipboard(text)  # OSC 52, base64: no byte of the answer reaches the terminal raw
    tool, failure = find_tool(os.environ), None
    if tool is not None:
        try:
            await copy_with(tool, text)
        except ToolFailed as exc:
            failure = str(exc)
    size = f"{len(text):,} character{'s' * (len(text) != 1)}"
    how = how_copied(tool.name if tool else None, failure, bool(os.environ.get("TMUX")))
    app.chat.add_notice(f"Copied {what} ({size}) to the clipboard {how}", kind="warning" if failure else "info")


COMMAND = Command("copy", "copy the last answer (or its N-th code block) to the clipboard", run, usage="[N]")
