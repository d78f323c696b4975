"""`!command`: the user's own shell command, run in the workspace and kept as a user-side note.

The user typed it, so nothing asks for approval and no sandbox confines it (it is what they
would have run in another terminal); it still runs without cairn's keys in its environment
(agent/process/secrets.py, the rule for every command cairn starts), in its own process group
so a timeout or Esc kills everything it started, with stdin closed and `tools.command_timeout`.

Its output is stored as a user message of kind "note", in Claude Code's shape (`<bash-input>`,
`<bash-stdout>`, `<bash-stderr>`): the next request carries it, so the model sees what the
user saw, and a resumed chat shows it as output (meta `shell`), never as a prompt. What is
kept is bounded (the model reads a command's output, not a log file's worth of it).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.process.process_group import exited, kill_group, spawn_group
from agent.process.secrets import command_environment
from agent.session.models import Message
from agent.tools.terminal import COMMAND_ENV, StreamCapture

if TYPE_CHECKING:
    from agent.settings.schema import Settings
    from agent.turn.writer import SessionWriter

SHELL_META = "shell"  # meta key of a shell note: {command, exit_code, timed_out, interrupted, duration_ms}
CAPTURE_BYTES = 1024 * 1024  # per stream while it runs (head and tail kept)
MAX_NOTE_CHARS = 30_000  # per stream, kept for the model: its middle goes first
PIPE_DRAIN_SECONDS = 1.0  # after the shell exits, for a background child still holding a pipe
EXIT_POLL_SECONDS = 0.05
NOTE_INTRO = "[The user ran this command in their own shell; its output is context for what they ask next.]"


@dataclass
class ShellRun:
    """How the command ended. `exit_code` None: it did not finish (timed out or interrupted)."""

    command: str
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    interrupted: bool
    duration_ms: int


async def run_command(
    command: str, *, cwd: Path, timeout: float, on_output: Callable[[str], None] | None = None
) -> ShellRun:
    """Run `command` with the user's shell (bash when there is one); `on_output` gets the text
    as it arrives. Cancelling the caller kills the process group and returns what it printed,
    marked interrupted (the caller stores it: the user saw it)."""
    started = time.monotonic()
    env = {**command_environment(dict(os.environ)), **COMMAND_ENV}
    proc = await spawn_group([shutil.which("bash") or "/bin/sh", "-c", command], cwd=str(cwd), env=env)
    out, err = StreamCapture(CAPTURE_BYTES, on_output), StreamCapture(CAPTURE_BYTES, on_output)
    assert proc.stdout is not None and proc.stderr is not None  # both are pipes
    readers = [asyncio.ensure_future(out.drain(proc.stdout)), asyncio.ensure_future(err.drain(proc.stderr))]
    timed_out = interrupted = False
    try:
        if not await exited(proc, timeout, poll=EXIT_POLL_SECONDS):
            timed_out = True
            kill_group(proc.pid)
        await asyncio.wait(readers, timeout=PIPE_DRAIN_SECONDS)
    except asyncio.CancelledError:
        interrupted = True
        kill_group(proc.pid)
    finally:
        kill_group(proc.pid)  # whatever it left in the background goes with it
        # Its pipes end with the group: read to their end, so nothing is left open for the
        # garbage collector to close after the event loop is gone.
        await asyncio.wait(readers, timeout=PIPE_DRAIN_SECONDS)
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    stderr = err.text()
    if timed_out:
        sep = "\n" if stderr and not stderr.endswith("\n") else ""
        stderr += f"{sep}[cairn] timed out after {timeout:g} s; killed."
    return ShellRun(
        command=command,
        stdout=out.text(),
        stderr=stderr,
        exit_code=None if timed_out or interrupted else proc.returncode,
        timed_out=timed_out,
        interrupted=interrupted,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def clip(text: str, limit: int = MAX_NOTE_CHARS) -> str:
    """`text` within `limit` characters: its head and tail, the middle said to be left out."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters left out] …\n{text[-half:]}"


def note_message(run: ShellRun) -> Message:
    """The user-side note the model reads with the next request."""
    parts = [NOTE_INTRO, f"<bash-input>{run.command}</bash-input>"]
    parts.append(f"<bash-stdout>{clip(run.stdout.rstrip())}</bash-stdout>")
    parts.append(f"<bash-stderr>{clip(run.stderr.rstrip())}</bash-stderr>")
    if run.interrupted:
        parts.append("[The user interrupted the command.]")
    elif run.exit_code:
        parts.append(f"[exit code {run.exit_code}]")
    meta: dict[str, Any] = {
        SHELL_META: {
            "command": run.command,
            "exit_code": run.exit_code,
            "timed_out": run.timed_out,
            "interrupted": run.interrupted,
            "duration_ms": run.duration_ms,
        }
    }
    return Message(role="user", kind="note", content="\n".join(parts), meta=meta)


def shown_streams(message: Message) -> tuple[str, str]:
    """What a stored shell note printed, stdout and stderr apart (the chat marks stderr)."""
    content = message.content or ""
    found = []
    for tag in ("bash-stdout", "bash-stderr"):
        start, end = content.find(f"<{tag}>"), content.rfind(f"</{tag}>")
        found.append(content[start + len(tag) + 2 : end] if start != -1 and end > start else "")
    return found[0], found[1]


def shown_output(message: Message) -> str:
    """What a stored shell note printed, for the chat: stdout, then stderr."""
    return "\n".join(part for part in shown_streams(message) if part)


async def shell_note(
    command: str, settings: Settings, writer: SessionWriter, on_output: Callable[[str], None] | None = None
) -> Message:
    """Run `command` in the workspace of `settings` and store the note through the session's
    `writer` as its newest message, even when interrupted (then marked so)."""
    run = await run_command(
        command, cwd=settings.workspace, timeout=settings.tools.command_timeout, on_output=on_output
    )
    write = asyncio.ensure_future(writer.append(note_message(run)))
    while True:  # a second Esc while it is written must not lose the note
        try:
            return await asyncio.shield(write)
        except asyncio.CancelledError:
            if write.done():
                return write.result()
