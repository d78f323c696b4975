"""`context-grep`: search a context file like ripgrep, with line numbers and context lines."""

from __future__ import annotations

from pydantic import Field

from agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.context_common import RefArgs, as_result, call, files_of

MAX_RESULTS = 200
MAX_CONTEXT_LINES = 20


class GrepArgs(RefArgs):
    pattern: str = Field(description="Regular expression (RE2 syntax: no backreferences or lookaround).")
    maxResults: int | None = Field(
        default=None, ge=1, le=MAX_RESULTS, description="At most this many matches (default 50)."
    )
    contextLines: int = Field(
        default=0, ge=0, le=MAX_CONTEXT_LINES, description="Lines of context before and after each match."
    )
    caseSensitive: bool = Field(default=False, description="Match case exactly (default: ignore case).")


class ContextGrep(Tool):
    name = "context-grep"
    description = tool_prompt(name)
    Args = GrepArgs

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        if not args.pattern:
            raise ToolError("pattern is empty; give a regular expression to search for")
        found = await call(
            files_of(ctx).grep(
                args.id,
                args.pattern,
                max_results=args.maxResults,
                context_lines=args.contextLines,
                case_sensitive=args.caseSensitive,
            )
        )
        return as_result(found, id=args.id, totalMatches=found.totalMatches)
