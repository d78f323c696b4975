"""Running one hook command: `sh -c` in the workspace, one JSON object on stdin.

As Claude Code runs them: the command is a shell line (`python3 ~/.cairn/hooks/guard.py`),
its folder is the workspace, `CLAUDE_PROJECT_DIR` (and `CAIRN_PROJECT_DIR`) name it. It runs
in its own process group so a timeout or an interrupt kills everything it started. Its
environment is cairn's without the provider keys cairn holds (the same rule as a model's
command: agent/process/secrets.py). What it prints is kept up to a bound; the rest is read
and dropped, so a chatty hook neither blocks on a full pipe nor fills memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.process.process_group import exited, kill_group, kill_spawned
from agent.process.secrets import command_environment

MAX_OUTPUT_BYTES = 256 * 1024  # per stream; a hook's answer is a line or a small JSON object
READ_CHUNK_BYTES = 64 * 1024
PIPE_DRAIN_SECONDS = 1.0  # after the shell exits, for a background child still holding a pipe
SHELL = "/bin/sh"
EXIT_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class HookRun:
    """How one command ended. `exit_code` None: it never finished (`timed_out`, or `error`)."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str = ""  # why it could not start


class _Capture:
    def __init__(self) -> None:
        self.data = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(READ_CHUNK_BYTES):
            room = MAX_OUTPUT_BYTES - len(self.data)
            self.data += chunk[: max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        return text + (f"\n[{self.dropped} more bytes of output dropped]" if self.dropped else "")


def hook_environment(workspace: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """cairn's environment less its keys, `CLAUDE_PROJECT_DIR` (Claude Code's) and
    `CAIRN_PROJECT_DIR` the workspace, and what an event adds (SessionStart's `CLAUDE_ENV_FILE`)."""
    env = command_environment(dict(os.environ))
    env["CLAUDE_PROJECT_DIR"] = env["CAIRN_PROJECT_DIR"] = str(workspace)
    env.update(extra or {})
    return env


def _stop_reading(proc: asyncio.subprocess.Process, tasks: Sequence[asyncio.Future]) -> None:
    """Stop feeding and reading, and close our pipe ends now (a background child of the hook
    may hold the other ends) rather than whenever the garbage collector finds them."""
    for task in tasks:
        task.cancel()
    transport = getattr(proc, "_transport", None)  # asyncio offers no public close
    if transport is not None and proc.returncode is not None:  # reaped: close() will not race the watcher
        transport.close()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    """Write the input and close; a hook that exits without reading it is no failure."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        stdin.close()
        await stdin.wait_closed()


async def run_hook(
    command: str, payload: bytes, *, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> HookRun:
    """Run `command` with `payload` on stdin; at `timeout` seconds its process group is killed.
    Cancelling the caller kills it too. `env`: variables the event adds."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=hook_environment(cwd, env),
            start_new_session=True,
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        spawn.add_done_callback(kill_spawned)  # it may already run: its group goes once it is there
        raise
    except OSError as exc:
        return HookRun(exit_code=None, error=f"could not start: {exc.strerror or exc}")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None  # all pipes
    out, err = _Capture(), _Capture()
    tasks = [
        asyncio.ensure_future(_feed(proc.stdin, payload)),
        asyncio.ensure_future(out.drain(proc.stdout)),
        asyncio.ensure_future(err.drain(proc.stderr)),
    ]
    try:
        timed_out = not await exited(proc, timeout, poll=EXIT_POLL_SECONDS)
        if timed_out:
            kill_group(proc.pid)
            await exited(proc, PIPE_DRAIN_SECONDS, poll=EXIT_POLL_SECONDS)
        await asyncio.wait(tasks, timeout=PIPE_DRAIN_SECONDS)
    except asyncio.CancelledError:
        kill_group(proc.pid)
        with contextlib.suppress(asyncio.CancelledError):  # reaped, so its pipes can be closed now
            await exited(proc, PIPE_DRAIN_SECONDS, poll=EXIT_POLL_SECONDS)
        raise
    finally:
        _stop_reading(proc, tasks)
    if timed_out:
        return HookRun(exit_code=None, stdout=out.text(), stderr=err.text(), timed_out=True)
    return HookRun(exit_code=proc.returncode, stdout=out.text(), stderr=err.text())
