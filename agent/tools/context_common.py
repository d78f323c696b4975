"""What the four context-file tools share: reaching the session's files, and their errors."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from pydantic import BaseModel, Field

from agent.tools.base import ToolArgs, ToolContext, ToolError, ToolResult

REF_ID_DESCRIPTION = 'A context file id as given in a tool output or by context-list, e.g. "art-0123456789abcdef".'


class RefArgs(ToolArgs):
    id: str = Field(description=REF_ID_DESCRIPTION)


def files_of(ctx: ToolContext) -> Any:
    files = ctx.context_files
    if files is None:
        raise ToolError("context files are not available in this session")
    return files


async def call(awaitable: Awaitable[Any]) -> Any:
    """Run a context-files operation; its typed errors become the tool's `Error:` result."""
    from agent.context.files.manager import ContextFileError

    try:
        return await awaitable
    except ContextFileError as exc:
        raise ToolError(str(exc)) from None


def as_result(value: BaseModel | dict, **meta: Any) -> ToolResult:
    data = value.model_dump() if isinstance(value, BaseModel) else value
    return ToolResult(content=json.dumps(data, ensure_ascii=False), meta=meta)
