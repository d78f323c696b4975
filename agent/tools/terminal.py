"""`terminal-execute`: run a shell command in its own process group, output kept whole.

The command gets its own session/process group so a timeout or an interrupt can kill
everything it started (background children included), not just the shell. Output is
read concurrently from both pipes so a chatty command never deadlocks, and is kept whole
(the context pipeline caps what the model sees) up to a memory guard per stream.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import shutil
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from agent.process.secrets import command_environment
from agent.tools import git_guard
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.permissions import ApprovalRequest, CommandVerdict
from agent.tools.sandbox_hints import SandboxFailures, sandbox_note, sandbox_symptom
from agent.tools.sandbox_protect import git_entries
from agent.tools.workspace import confine

# Memory guard per stream: the first and last halves are kept, the middle is dropped.
STREAM_KEEP_BYTES = 8 * 1024 * 1024
READ_CHUNK_BYTES = 256 * 1024
# After SIGTERM on timeout, how long the group gets before SIGKILL.
KILL_GRACE_SECONDS = 1.0
# After the shell exits, how long to wait for background children still holding the pipes.
PIPE_DRAIN_SECONDS = 1.0
EXIT_POLL_SECONDS = 0.05
# An interrupt during start-up waits at most this long for the command's pid, to kill its group.
SPAWN_GRACE_SECONDS = 5.0

# GIT_OPTIONAL_LOCKS=0: a read-only `git status` (run unasked) must not write .git/index.
COMMAND_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb", "NO_COLOR": "1", "GIT_OPTIONAL_LOCKS": "0"}


class TerminalArgs(ToolArgs):
    command: str = Field(min_length=1, description="Shell command to run (bash).")
    timeout: float | None = Field(
        default=None,
        gt=0,
        description="Seconds before the command and everything it started is killed (default 120; "
        "at most the user's cap, 600 unless set otherwise).",
    )
    workingDirectory: str | None = Field(
        default=None, description="Folder to run in, relative to the workspace (default: the workspace root)."
    )
    outsideSandbox: bool | None = Field(
        default=None,
        description="true: the user is asked to run it outside the sandbox (only after it failed "
        "there for want of write access, the network or a hidden file).",
    )
    background: bool | None = Field(
        default=None,
        description="true: keep it running (a server, a watcher) and return a taskId and its first output "
        "at once; then task-output reads it, task-stop ends it.",
    )


class StreamCapture:
    """Bytes of one stream: whole up to `keep` bytes, else head + tail with a drop note."""

    def __init__(self, keep: int, progress: Callable[[str], None] | None = None) -> None:
        self.progress = progress  # ToolContext.progress: the text as it arrives
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.head_limit = keep // 2
        self.tail_limit = keep - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size > self.tail_limit:
            excess = self.tail_size - self.tail_limit
            first = self.tail[0]
            cut = min(len(first), excess)
            if cut == len(first):
                self.tail.popleft()
            else:
                self.tail[0] = first[cut:]
            self.tail_size -= cut
            self.dropped += cut

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(READ_CHUNK_BYTES):
            self.feed(chunk)
            if self.progress is not None:
                text = self._decoder.decode(chunk)
                if text:
                    self.progress(text)

    def text(self) -> str:
        tail = b"".join(self.tail)
        if not self.dropped:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        note = f"\n… [{self.dropped} bytes of output dropped here to protect memory] …\n"
        return bytes(self.head).decode("utf-8", errors="replace") + note + tail.decode("utf-8", errors="replace")


def _signal_group(pid: int, sig: int) -> bool:
    """Signal the command's process group (its pgid is its pid); False if it is gone."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _wait_exit(proc: asyncio.subprocess.Process, timeout: float | None) -> bool:
    """True once the shell exited. Polls returncode: on Python 3.11 `wait()` also waits
    for the pipes, which a background child may hold open forever."""
    deadline = None if timeout is None else time.monotonic() + timeout
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while proc.returncode is None:
            remaining = EXIT_POLL_SECONDS if deadline is None else min(EXIT_POLL_SECONDS, deadline - time.monotonic())
            if remaining <= 0:
                return False
            await asyncio.wait([waiter], timeout=remaining)
        return True
    finally:
        waiter.cancel()


async def _terminate_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group; once the shell has gone (or after the grace period),
    SIGKILL whatever is left. Killed orphans may linger as zombies when nothing reaps
    them, so "the group still exists" is not a reason to keep waiting."""
    if not _signal_group(proc.pid, signal.SIGTERM):
        return
    await _wait_exit(proc, KILL_GRACE_SECONDS)
    _signal_group(proc.pid, signal.SIGKILL)


async def _kill_when_spawned(spawn: asyncio.Future) -> None:
    """An interrupt came while asyncio was still wiring the command's pipes. The command
    already runs (and may have started children): cancelling the spawn would kill the shell
    alone, then wait for pipes its children hold. Let the spawn finish, then kill the group."""

    def kill(done: asyncio.Future) -> None:
        if not done.cancelled() and done.exception() is None:
            _signal_group(done.result().pid, signal.SIGKILL)

    spawn.add_done_callback(kill)  # even if it finishes only after we stop waiting
    deadline = time.monotonic() + SPAWN_GRACE_SECONDS
    while not spawn.done() and time.monotonic() < deadline:
        try:
            await asyncio.wait([spawn], timeout=deadline - time.monotonic())
        except asyncio.CancelledError:  # interrupted again: the group still has to go
            continue


def _stop_reading(proc: asyncio.subprocess.Process, readers: Sequence[asyncio.Future]) -> None:
    """Cancel the readers and close our pipe ends now, rather than when the garbage
    collector finds the transport (possibly after its event loop is gone)."""
    for task in readers:
        task.cancel()
    transport = getattr(proc, "_transport", None)  # asyncio offers no public close
    # Only once asyncio has reaped the shell: before that, close() would poll()/kill() it
    # itself and race the child watcher for the exit status.
    if transport is not None and proc.returncode is not None:
        transport.close()


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _created_repositories_note(created: list[str], workspace: Path) -> str:
    """What the model and the user are told when a sandboxed command made a git repository
    where there was none: the sandbox protects an existing one, and cannot protect one ahead."""
    names = ", ".join(os.path.relpath(p, os.path.realpath(workspace)) for p in created)
    return (
        f"[cairn] This command created {names} in the workspace. git runs the programs a repository's "
        f"config and hooks name whenever anyone uses git there, outside any sandbox: remove it unless "
        f"the user asked for a repository."
    )


def _launch(command: str, cwd: Path, ctx: ToolContext, verdict: CommandVerdict) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run `command` as the verdict says: in the sandbox or not,
    with git hardened or not. Never with cairn's own key in the environment."""
    env = {**command_environment(dict(os.environ)), **COMMAND_ENV}
    script = command
    if verdict.harden_git:
        env = git_guard.hardened_environment(env, str(ctx.workspace), ceiling=verdict.git_ceiling)
        script = git_guard.hardened_script(command)
    argv = [_shell(), "-c", script]
    sandbox = ctx.permissions.sandbox
    if verdict.sandbox is not None and sandbox is not None:
        return sandbox.argv(argv, verdict.sandbox, cwd), sandbox.environment(env)
    return argv, env


class Terminal(Tool):
    name = "terminal-execute"
    description = tool_prompt(name)
    Args = TerminalArgs

    def __init__(self, failures: SandboxFailures | None = None) -> None:
        # This session's sandboxed failures: an escalation's question says why it asks.
        self.failures = failures if failures is not None else SandboxFailures()

    async def run(self, args: TerminalArgs, ctx: ToolContext) -> ToolResult:
        cwd = ctx.workspace
        if args.workingDirectory:
            rp = await confine(args.workingDirectory, ctx, tool=self.name)
            if not rp.path.is_dir():
                raise ToolError(f"workingDirectory {rp.display} is not an existing folder")
            cwd = rp.path
        words = args.command.split()
        if not words:
            raise ToolError("command is empty")
        request = ApprovalRequest(
            tool=self.name,
            kind="command",
            key=f"command:{words[0]}",
            title="Run command in the background" if args.background else "Run command",
            detail=args.command,
            cwd=str(cwd),  # read-only commands and rules check their paths against this folder
            escalate=bool(args.outsideSandbox),
            note=self.failures.reason(args.command) if args.outsideSandbox else "",
        )
        verdict = await ctx.permissions.check_command(request)
        if not verdict.allowed:
            return ToolResult.error("the user denied running this command", command=args.command)

        if args.background:  # same verdict, same launch: only the waiting differs (task_start.py)
            return await self._start_background(args.command, cwd, ctx, verdict)
        asked = args.timeout if args.timeout is not None else ctx.command_timeout
        timeout = min(asked, ctx.max_command_timeout)
        result = await self._execute(args.command, cwd, timeout, ctx, verdict, clamped=asked > timeout)
        if asked > timeout:
            result.meta["timeoutClamped"] = {"asked": asked, "used": timeout}
        return result

    async def _start_background(self, command: str, cwd: Path, ctx: ToolContext, verdict: CommandVerdict) -> ToolResult:
        from agent.tools.task_start import start_background

        if ctx.tasks is None:
            raise ToolError("background commands are not available here; run it without background")
        argv, env = _launch(command, cwd, ctx, verdict)
        return await start_background(command, argv, env, cwd, ctx.tasks, verdict.sandbox)

    async def _execute(
        self, command: str, cwd: Path, timeout: float, ctx: ToolContext, verdict: CommandVerdict, *, clamped: bool
    ) -> ToolResult:
        started = time.monotonic()
        argv, env = _launch(command, cwd, ctx, verdict)
        writable = verdict.sandbox == "workspace-write"
        repositories = git_entries(str(ctx.workspace)) if writable else set()
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(cwd),
                env=env,
                start_new_session=True,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            await _kill_when_spawned(spawn)
            raise
        except OSError as exc:
            raise ToolError(f"cannot start the command: {exc.strerror or exc}") from None
        ctx.processes.add(proc)
        out, err = StreamCapture(STREAM_KEEP_BYTES, ctx.progress), StreamCapture(STREAM_KEEP_BYTES, ctx.progress)
        assert proc.stdout is not None and proc.stderr is not None  # both are pipes
        readers = [asyncio.ensure_future(out.drain(proc.stdout)), asyncio.ensure_future(err.drain(proc.stderr))]
        timed_out = False
        try:
            if not await _wait_exit(proc, timeout):
                timed_out = True
                await _terminate_group(proc)
                await _wait_exit(proc, KILL_GRACE_SECONDS)  # reaped after SIGKILL
            _, pending = await asyncio.wait(readers, timeout=PIPE_DRAIN_SECONDS)
            if pending:  # a background child still holds the pipes: stop listening
                _stop_reading(proc, readers)
        except asyncio.CancelledError:
            _signal_group(proc.pid, signal.SIGKILL)
            _stop_reading(proc, readers)
            raise
        finally:
            ctx.processes.discard(proc)

        stderr = err.text()
        if timed_out:
            sep = "\n" if stderr and not stderr.endswith("\n") else ""
            stderr += f"{sep}[cairn] Command timed out after {timeout:g} s; its process group was killed."
        if clamped:
            sep = "\n" if stderr and not stderr.endswith("\n") else ""
            cap = "[cairn] The timeout asked for is above the cap (tools.max_command_timeout)"
            stderr += f"{sep}{cap}: ran with {timeout:g} s."
        created = sorted(git_entries(str(ctx.workspace)) - repositories) if writable else []
        if created:
            sep = "\n" if stderr and not stderr.endswith("\n") else ""
            stderr += f"{sep}{_created_repositories_note(created, ctx.workspace)}"
        exit_code = proc.returncode
        if verdict.sandbox is not None and not timed_out:
            symptom = sandbox_symptom(stderr + out.text()[-4096:]) if exit_code != 0 else ""
            self.failures.record(command, verdict.sandbox, symptom)
            if symptom:
                sep = "\n" if stderr and not stderr.endswith("\n") else ""
                stderr += sep + sandbox_note(verdict.sandbox, symptom)
        content = json.dumps(
            {"command": command, "stdout": out.text(), "stderr": stderr, "exitCode": exit_code},
            ensure_ascii=False,
        )
        meta: dict[str, Any] = {
            "exitCode": exit_code,
            "timedOut": timed_out,
            "durationMs": int((time.monotonic() - started) * 1000),
        }
        if verdict.sandbox is not None:
            meta["sandbox"] = verdict.sandbox
        else:  # what the tool's block says: this run had the user's access, files and network
            meta["outsideSandbox"] = True
        if out.dropped or err.dropped:
            meta["droppedBytes"] = {"stdout": out.dropped, "stderr": err.dropped}
        return ToolResult(content=content, is_error=timed_out or exit_code != 0, meta=meta)
