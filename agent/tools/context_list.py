"""`context-list`: the session's context files (large outputs, condensed history, tool catalog)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolResult, tool_prompt
from agent.tools.context_common import as_result, call, files_of

MAX_LIST = 200


class ListArgs(ToolArgs):
    kind: Literal["artifact", "history", "catalog"] | None = Field(
        default=None,
        description="Only this kind: artifact (large tool outputs), history (condensed "
        "conversation), catalog (tool definitions).",
    )
    limit: int = Field(default=50, ge=1, le=MAX_LIST, description="At most this many, newest first.")


class ContextList(Tool):
    name = "context-list"
    description = tool_prompt(name)
    Args = ListArgs

    async def run(self, args: ListArgs, ctx: ToolContext) -> ToolResult:
        items = await call(files_of(ctx).list(kind=args.kind, limit=args.limit))
        return as_result({"items": [item.model_dump() for item in items]}, count=len(items))
