"""The system clipboard's own tool (`wl-copy`, `xclip`, `xsel`, `pbcopy`), beside OSC 52.

OSC 52 (written by Textual's `App.copy_to_clipboard`) reaches the clipboard only where the
terminal allows it (many ask, some refuse, tmux needs `set-clipboard on`); on a desktop the
session's clipboard tool works whatever the terminal says. `/copy` does both and says which
(agent/ui/commands/copy.py); this module picks the tool and runs it.

The text is a model's answer, so the tool gets it on stdin only: never as an argument, never
through a shell. It runs in a process group of its own, with an environment without cairn's
provider keys (agent/process/secrets.py), and is waited for only briefly: `xclip`, `xsel` and
`wl-copy` read the text, then leave a child behind that serves the selection until something
else is copied (the clipboard on X and Wayland belongs to a running program); its output goes
to /dev/null so that nothing waits on a pipe that child holds open.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from agent.process.process_group import kill_group
from agent.process.secrets import command_environment

CLIPBOARD_TOOL_TIMEOUT_S = 3.0  # a tool that takes longer (a display that does not answer) is given up


@dataclass(frozen=True)
class ClipboardTool:  # a dataclass: /copy's module loads with the command list, on a keystroke
    name: str  # what the notice says: "xclip"
    argv: tuple[str, ...]  # the program found on PATH, then its arguments


# Which tool for which session: (the variable saying the session is there, the program, its
# arguments), in order. Wayland first: its desktops also set DISPLAY for X programs.
_SESSION_TOOLS = (
    ("WAYLAND_DISPLAY", "wl-copy", ()),
    ("DISPLAY", "xclip", ("-selection", "clipboard")),
    ("DISPLAY", "xsel", ("--clipboard", "--input")),
)


def find_tool(environ: Mapping[str, str], platform: str = sys.platform) -> ClipboardTool | None:
    """The clipboard tool this session has, on `environ`'s PATH; None when there is none."""
    path = environ.get("PATH")
    candidates = [(name, args) for variable, name, args in _SESSION_TOOLS if environ.get(variable)]
    if platform == "darwin":
        candidates.append(("pbcopy", ()))
    for name, args in candidates:
        found = shutil.which(name, path=path)
        if found:
            return ClipboardTool(name, (found, *args))
    return None


class ToolFailed(Exception):
    """The tool ran but did not take the text: it failed, or did not finish in time."""


async def copy_with(tool: ClipboardTool, text: str, timeout: float = CLIPBOARD_TOOL_TIMEOUT_S) -> None:
    """Give `text` to `tool` on its stdin; ToolFailed when it did not take it."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *tool.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            env=command_environment(dict(os.environ)),
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolFailed(f"could not start ({exc.strerror or exc})") from exc
    try:
        await asyncio.wait_for(proc.communicate(text.encode("utf-8")), timeout)
    except TimeoutError:
        kill_group(proc.pid)
        await proc.wait()
        raise ToolFailed(f"did not finish in {timeout:g}s") from None
    if proc.returncode:
        raise ToolFailed(f"exit {proc.returncode}")
