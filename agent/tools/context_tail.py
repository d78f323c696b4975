"""`context-tail`: the last lines of a context file (where errors usually are)."""

from __future__ import annotations

from pydantic import Field

from agent.tools.base import Tool, ToolContext, ToolResult, tool_prompt
from agent.tools.context_common import RefArgs, as_result, call, files_of


class TailArgs(RefArgs):
    lines: int | None = Field(default=None, ge=1, description="How many lines from the end (default 200; capped).")


class ContextTail(Tool):
    name = "context-tail"
    description = tool_prompt(name)
    Args = TailArgs

    async def run(self, args: TailArgs, ctx: ToolContext) -> ToolResult:
        tail = await call(files_of(ctx).tail(args.id, lines=args.lines))
        return as_result(tail, id=args.id)
