"""`context-read`: one page of a context file, by UTF-8 byte offset."""

from __future__ import annotations

from pydantic import Field

from agent.tools.base import Tool, ToolContext, ToolResult, tool_prompt
from agent.tools.context_common import RefArgs, as_result, call, files_of


class ReadPageArgs(RefArgs):
    offset: int = Field(
        default=0,
        ge=0,
        description="Byte offset to start at (0 = the beginning); use nextOffset from the previous page.",
    )
    limit: int | None = Field(default=None, ge=1, description="Bytes to read (default 8192; larger values are capped).")


class ContextRead(Tool):
    name = "context-read"
    description = tool_prompt(name)
    Args = ReadPageArgs

    async def run(self, args: ReadPageArgs, ctx: ToolContext) -> ToolResult:
        page = await call(files_of(ctx).read(args.id, offset=args.offset, limit=args.limit))
        return as_result(page, id=args.id, offset=page.offset, done=page.done)
