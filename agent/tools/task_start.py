"""`terminal-execute` with `background: true`: the command started as a background task.

terminal.py decides everything a command needs (the approval, the sandbox, the environment
without cairn's keys, git hardened) and hands over the argv; this starts it in its own process
group in the agent's task table (agent/tools/background_tasks.py) and answers at once with its
`taskId` and what it printed in its first second, so the turn goes on while it runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agent.process.process_group import spawn_group
from agent.tools.background_tasks import BackgroundTask, BackgroundTasks
from agent.tools.base import ToolError, ToolResult

# How long the start waits for the command's first output (less if it ends sooner).
FIRST_OUTPUT_SECONDS = 1.0
# What a result carries of a task's output at most; the rest waits for the next task-output.
READ_LIMIT_BYTES = 32 * 1024
SANDBOX_NOTE = (
    "It runs in the sandbox: no network, its own loopback; commands outside it cannot reach a server it starts."
)


def _whole_characters(data: bytes) -> bytes:
    """`data` without a UTF-8 character cut at its end (the next read starts with it)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":
            return data[: exc.start]
    return data


def read_new(task: BackgroundTask, limit: int = READ_LIMIT_BYTES) -> dict[str, Any]:
    """What the model is given of `task` now: its output since the last read (bounded), the bytes
    dropped before it could be read, and how it ended once it has. Moves the read mark."""
    data, dropped, offset = task.output.since(task.read_offset, limit)
    if task.status == "running" or task.output.total > offset:
        whole = _whole_characters(data)
        offset -= len(data) - len(whole)
        data = whole
    task.read_offset = offset
    shown: dict[str, Any] = {"taskId": task.id, "command": task.command, "status": task.status}
    text = data.decode("utf-8", errors="replace")
    if dropped:
        text = f"[{dropped} bytes of output dropped before they were read]\n{text}"
    shown["output"] = text
    if task.output.total > offset:
        shown["more"] = f"{task.output.total - offset} more bytes: call task-output again"
    if task.status != "running":
        shown["exitCode"] = task.exit_code
        shown["ended"] = task.describe_end()
        task.end_seen = task.end_seen or task.output.total <= offset
    return shown


async def start_background(
    command: str, argv: list[str], env: dict[str, str], cwd: Path, tasks: BackgroundTasks, sandbox: str | None
) -> ToolResult:
    """Start `argv` as a task of `tasks`; the result holds its id and first output."""
    try:
        proc = await spawn_group(argv, cwd=str(cwd), env=env, stderr=asyncio.subprocess.STDOUT)
    except OSError as exc:
        raise ToolError(f"cannot start the command: {exc.strerror or exc}") from None
    task = tasks.adopt(command, proc, sandbox)
    await tasks.wait(task, FIRST_OUTPUT_SECONDS)
    shown = read_new(task)
    if task.status == "running":
        shown["note"] = "Running in the background: task-output reads what it prints next, task-stop ends it."
        if sandbox is not None:
            shown["note"] += " " + SANDBOX_NOTE
    meta: dict[str, Any] = {"taskId": task.id, "background": True, "pid": task.pid}
    if sandbox is not None:
        meta["sandbox"] = sandbox
    else:
        meta["outsideSandbox"] = True
    failed = task.status != "running" and task.exit_code != 0
    return ToolResult(content=json.dumps(shown, ensure_ascii=False), is_error=failed, meta=meta)
