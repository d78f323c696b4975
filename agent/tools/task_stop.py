"""`task-stop`: end a background task, its whole process group (SIGTERM, then SIGKILL)."""

from __future__ import annotations

import json

from agent.tools.background_tasks import TaskNotFound
from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.task_output import TaskIdArgs
from agent.tools.task_start import read_new


class TaskStopArgs(TaskIdArgs):
    pass


class TaskStop(Tool):
    name = "task-stop"
    description = tool_prompt(name)
    Args = TaskStopArgs

    async def run(self, args: TaskStopArgs, ctx: ToolContext) -> ToolResult:
        if ctx.tasks is None:
            raise ToolError("background tasks are not available here")
        try:
            task = ctx.tasks.get(args.taskId)
        except TaskNotFound:
            raise ToolError(f"no background task {args.taskId!r} in this session") from None
        await ctx.tasks.stop(task, "model")
        return ToolResult(content=json.dumps(read_new(task), ensure_ascii=False), meta={"taskId": task.id})
