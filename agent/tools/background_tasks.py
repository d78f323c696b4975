"""Background tasks: commands `terminal-execute` started with `background: true`, one table per agent.

A dev server, a watcher or a long build would otherwise block the turn or die at the timeout.
The table owns each task's process (its own process group, started by terminal.py under the same
approval, sandbox, key scrubbing and git hardening as any command), keeps a bounded tail of its
output (stdout and stderr as they arrive, a count of the bytes dropped), and remembers how far
the model has read, so `task-output` returns only what is new. Nothing outlives the session:
`end_all` kills every group (the runtime's close, a new session, a subagent's end), and a task
whose end the model has not seen is said in one line at the next turn (`take_unseen_endings`).
The owner (the agent) is told of each start and end (`on_change`) to show it to the user.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from agent.process.process_group import exited, kill_group, terminate_group

# What a task's output keeps in memory: its newest bytes (the context files keep what the model read).
KEEP_BYTES = 1024 * 1024
READ_CHUNK_BYTES = 64 * 1024
EXIT_POLL_SECONDS = 0.1
# After the shell exited, how long the pipe is read for what is still in it.
PIPE_DRAIN_SECONDS = 1.0
# task-stop: SIGTERM first, SIGKILL after this long.
STOP_GRACE_SECONDS = 2.0
# The end of a session: how long the killed groups' shells get to be reaped.
REAP_SECONDS = 2.0
# What the user's view of a task (`/tasks N`) shows of its output: the newest bytes.
VIEW_BYTES = 64 * 1024

TaskStatus = Literal["running", "exited", "stopped"]
StoppedBy = Literal["model", "user", "session_end"]


class OutputTail:
    """A task's output as it arrives: the newest `keep` bytes, and how many came in all."""

    def __init__(self, keep: int = KEEP_BYTES) -> None:
        self.keep = keep
        self.buffer = bytearray()
        self.total = 0  # bytes ever fed; the buffer holds the last len(buffer) of them

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk
        self.total += len(chunk)
        excess = len(self.buffer) - self.keep
        if excess > 0:
            del self.buffer[:excess]

    def since(self, offset: int, limit: int) -> tuple[bytes, int, int]:
        """(bytes after `offset`, at most `limit` of them; bytes dropped before they could be
        read; the offset after what is returned)."""
        first = self.total - len(self.buffer)
        start = max(offset, first)
        data = bytes(self.buffer[start - first : start - first + limit])
        return data, start - offset, start + len(data)

    def text(self, limit: int) -> str:
        """The newest `limit` bytes as text (for the user's view)."""
        return bytes(self.buffer[-limit:]).decode("utf-8", errors="replace")


class BackgroundTask:
    """One background command: its process, output, what the model read, how it ended."""

    def __init__(self, task_id: str, command: str, proc: asyncio.subprocess.Process, sandbox: str | None) -> None:
        self.id = task_id
        self.command = command
        self.proc = proc
        self.pid = proc.pid
        self.sandbox = sandbox  # None: it runs outside the sandbox, as the verdict said
        self.output = OutputTail()
        self.read_offset = 0  # what the model has been given
        self.started = time.monotonic()
        self.ended_at: float | None = None
        self.status: TaskStatus = "running"
        self.stopped_by: StoppedBy | None = None
        self.exit_code: int | None = None
        self.end_seen = False  # the model got its exit status (a result or a note)
        self.ended = asyncio.Event()
        self.watcher: asyncio.Task[None] | None = None

    @property
    def runtime_seconds(self) -> float:
        return (self.ended_at if self.ended_at is not None else time.monotonic()) - self.started

    def describe_end(self) -> str:
        """`exited with code 0`, `was stopped by the user`: how it ended, in words."""
        if self.stopped_by == "user":
            return "was stopped by the user"
        if self.stopped_by == "model":
            return "was stopped (task-stop)"
        if self.stopped_by == "session_end":
            return "was stopped at the end of the session"
        return f"exited with code {self.exit_code}"


class TaskView(BaseModel):
    """What a front end shows of a task (`/tasks`): a copy, never the live object."""

    id: str
    command: str
    pid: int
    status: TaskStatus
    stopped_by: StoppedBy | None = None
    exit_code: int | None = None
    runtime_seconds: float
    sandbox: str | None = None
    output: str | None = None  # its newest output, when asked for


def view(task: BackgroundTask, *, with_output: bool = False) -> TaskView:
    return TaskView(
        output=task.output.text(VIEW_BYTES) if with_output else None,
        id=task.id,
        command=task.command,
        pid=task.pid,
        status=task.status,
        stopped_by=task.stopped_by,
        exit_code=task.exit_code,
        runtime_seconds=task.runtime_seconds,
        sandbox=task.sandbox,
    )


class TaskNotFound(KeyError):
    """No task of that id in this session."""


class BackgroundTasks:
    """The tasks of one agent (one session): started, read, stopped, all ended with it."""

    def __init__(self, on_change: Callable[[BackgroundTask], None] | None = None) -> None:
        self.on_change = on_change  # told at each start and end (the agent makes an event of it)
        self._tasks: dict[str, BackgroundTask] = {}
        self._next = 1

    def adopt(self, command: str, proc: asyncio.subprocess.Process, sandbox: str | None) -> BackgroundTask:
        """Take `proc` (started in its own process group, stdout a pipe with stderr joined to it)
        as a new task and begin reading its output."""
        task = BackgroundTask(str(self._next), command, proc, sandbox)
        self._next += 1
        self._tasks[task.id] = task
        task.watcher = asyncio.ensure_future(self._watch(task))
        self._changed(task)
        return task

    def get(self, task_id: str) -> BackgroundTask:
        task = self._tasks.get(task_id.strip().removeprefix("#"))
        if task is None:
            raise TaskNotFound(task_id)
        return task

    def tasks(self) -> list[BackgroundTask]:
        return list(self._tasks.values())

    def views(self, *, with_output: bool = False) -> list[TaskView]:
        return [view(t, with_output=with_output) for t in self._tasks.values()]

    @property
    def running(self) -> list[BackgroundTask]:
        return [t for t in self._tasks.values() if t.status == "running"]

    async def wait(self, task: BackgroundTask, seconds: float) -> None:
        """Until `task` ended, at most `seconds`."""
        if seconds > 0 and not task.ended.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(task.ended.wait(), timeout=seconds)

    async def wait_for_output(self, task: BackgroundTask, seconds: float) -> None:
        """Until `task` printed something new for the model or ended, at most `seconds`."""
        deadline = time.monotonic() + seconds
        while task.output.total <= task.read_offset and not task.ended.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(task.ended.wait(), timeout=min(EXIT_POLL_SECONDS, remaining))

    async def stop(self, task: BackgroundTask, by: StoppedBy) -> None:
        """SIGTERM its process group, SIGKILL what is left after the grace period; it ended
        when this returns (its shell reaped)."""
        if task.status != "running":
            return
        task.stopped_by = by
        terminate_group(task.pid)
        await self.wait(task, STOP_GRACE_SECONDS)
        kill_group(task.pid)
        await self.wait(task, STOP_GRACE_SECONDS)

    async def stop_id(self, task_id: str, by: StoppedBy) -> TaskView:
        """`stop` by id (the user's `/tasks stop N`); TaskNotFound when there is none."""
        task = self.get(task_id)
        await self.stop(task, by)
        return view(task)

    def kill_all(self) -> list[BackgroundTask]:
        """SIGKILL every running task's group now (a new session): the watchers reap them."""
        killed = self.running
        for task in killed:
            task.stopped_by = "session_end"
            kill_group(task.pid)
        return killed

    async def end_all(self) -> list[BackgroundTask]:
        """The session ends: every running task's group killed, their shells reaped."""
        killed = self.kill_all()
        watchers = [t.watcher for t in killed if t.watcher is not None]
        if watchers:
            await asyncio.wait(watchers, timeout=REAP_SECONDS)
        return killed

    def take_unseen_endings(self) -> list[BackgroundTask]:
        """Tasks that ended without the model seeing how (not stopped by it, not read after
        their end); they count as seen from now on."""
        found = [t for t in self._tasks.values() if t.status != "running" and not t.end_seen]
        for task in found:
            task.end_seen = True
        return found

    def _changed(self, task: BackgroundTask) -> None:
        if self.on_change is not None:
            self.on_change(task)

    async def _watch(self, task: BackgroundTask) -> None:
        """Read the output until the shell exits (and its pipe is drained), then end the task:
        what the shell left running in its group goes with it."""
        proc = task.proc
        reader = asyncio.ensure_future(self._read(task))
        try:
            await exited(proc, math.inf, poll=EXIT_POLL_SECONDS)
            await asyncio.wait([reader], timeout=PIPE_DRAIN_SECONDS)
        finally:
            kill_group(task.pid)
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            transport = getattr(proc, "_transport", None)  # asyncio offers no public close
            if transport is not None and proc.returncode is not None:
                transport.close()
            task.exit_code = proc.returncode
            task.ended_at = time.monotonic()
            task.status = "stopped" if task.stopped_by is not None else "exited"
            task.end_seen = task.end_seen or task.stopped_by == "model"
            task.ended.set()
            self._changed(task)

    @staticmethod
    async def _read(task: BackgroundTask) -> None:
        stream = task.proc.stdout
        assert stream is not None  # started with a pipe
        while chunk := await stream.read(READ_CHUNK_BYTES):
            task.output.feed(chunk)
