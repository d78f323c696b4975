"""`task-stop`: end a background task, its whole process group (SIGTERM, then SIGKILL)."""

from __future__ import annotations

import json

from agent.tools.base import Tool, ToolContext, ToolResult, tool_prompt
from agent.tools.task_output import TaskIdArgs, task_of
from agent.tools.task_start import read_new


class TaskStopArgs(TaskIdArgs):
    pass


class TaskStop(Tool):
    name = "task-stop"
    description = tool_prompt(name)
    Args = TaskStopArgs

    async def run(self, args: TaskStopArgs, ctx: ToolContext) -> ToolResult:
        tasks, task = task_of(ctx, args.taskId)
        await tasks.stop(task, "model")
        return ToolResult(content=json.dumps(read_new(task), ensure_ascii=False), meta={"taskId": task.id})
