"""A child process and its group: killed whole, and waited for without waiting on its pipes.

Shared by what cairn starts in a shell of its own — the user's `!command`
(agent/runtime/shell.py), hooks (agent/hooks/runner.py), background tasks
(agent/tools/background_tasks.py) — and the loop's interrupt (agent/turn/tool_steps.py).
Standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads; one already gone (or not ours) is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pid, signal.SIGKILL)


def terminate_group(pid: int) -> None:
    """SIGTERM the process group `pid` leads (a polite stop first); one already gone is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pid, signal.SIGTERM)


def kill_spawned(spawn: asyncio.Future) -> None:
    """A done-callback for a spawn that was cancelled while starting: its group goes too."""
    if not spawn.cancelled() and spawn.exception() is None:
        kill_group(spawn.result().pid)


async def spawn_group(
    argv: list[str], *, cwd: str, env: dict[str, str], stderr: int = asyncio.subprocess.PIPE
) -> asyncio.subprocess.Process:
    """`argv` started in a process group of its own, stdin closed, stdout a pipe (stderr a pipe,
    or STDOUT to join it). Cancelled while starting: the spawn is let finish and its group killed
    (it may already run and have started children). OSError when it cannot start."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        spawn.add_done_callback(kill_spawned)
        raise


async def exited(proc: asyncio.subprocess.Process, timeout: float, *, poll: float) -> bool:
    """True once the process exited within `timeout` seconds. Polled: `wait()` would also wait
    for the pipes, which something it left running in the background may hold open for ever."""
    deadline = time.monotonic() + timeout
    while proc.returncode is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        await asyncio.sleep(min(poll, remaining))
    return True
