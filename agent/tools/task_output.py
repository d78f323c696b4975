"""`task-output`: what a background task printed since the model last asked, and how it ended.

`waitSeconds` lets the model wait for a build or a test run to finish without a `sleep`
command (up to a cap, so a turn is never held long); a server's log is read without waiting.
"""

from __future__ import annotations

import json

from pydantic import Field, field_validator

from agent.tools.background_tasks import BackgroundTask, BackgroundTasks, TaskNotFound
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.task_start import read_new

MAX_WAIT_SECONDS = 30.0


class TaskIdArgs(ToolArgs):
    taskId: str = Field(min_length=1, description="The id terminal-execute returned.")

    @field_validator("taskId", mode="before")
    @classmethod
    def _number_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value  # `1` for "1"


def task_of(ctx: ToolContext, task_id: str) -> tuple[BackgroundTasks, BackgroundTask]:
    """The session's task table and its task `task_id`, or the model's error saying there is none."""
    if ctx.tasks is None:
        raise ToolError("background tasks are not available here")
    try:
        return ctx.tasks, ctx.tasks.get(task_id)
    except TaskNotFound:
        raise ToolError(f"no background task {task_id!r} in this session") from None


class TaskOutputArgs(TaskIdArgs):
    waitSeconds: float | None = Field(
        default=None, ge=0, description=f"Wait up to this long for it to finish (at most {MAX_WAIT_SECONDS:g})."
    )


class TaskOutput(Tool):
    name = "task-output"
    description = tool_prompt(name)
    Args = TaskOutputArgs

    async def run(self, args: TaskOutputArgs, ctx: ToolContext) -> ToolResult:
        tasks, task = task_of(ctx, args.taskId)
        await tasks.wait(task, min(args.waitSeconds or 0.0, MAX_WAIT_SECONDS))
        shown = read_new(task)
        failed = task.status == "exited" and task.exit_code != 0
        return ToolResult(content=json.dumps(shown, ensure_ascii=False), is_error=failed, meta={"taskId": task.id})
