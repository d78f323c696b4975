"""An MCP server's tool as a cairn tool: the server's schema is what the model sees, the
arguments go to the server as sent (it validates them), and the call asks first.

MCP tools ask for approval unless `[permissions] allow` names them (`mcp__github__list_issues`)
or their server (`mcp__github__*`): a server's tool may do anything its server can.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict

from agent.mcp.connection import McpCallError, RemoteTool, ServerConnection
from agent.mcp.results import read_result
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agent.tools.permissions import ApprovalRequest

MAX_SHOWN_ARGUMENT_CHARS = 2_000


class McpArgs(ToolArgs):
    """Whatever object the model sent: the server's own schema decides what is valid."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    Args = McpArgs

    def __init__(
        self, remote: RemoteTool, connection: ServerConnection, *, max_result_chars: int, instructions: str = ""
    ) -> None:
        """`instructions`: the server's, labelled (agent/mcp/instructions.py), for one tool of each server."""
        self.remote = remote
        self.instructions = instructions
        self.connection = connection
        self.max_result_chars = max_result_chars
        self.name = remote.exposed  # per instance: each server tool has its own
        self.description = remote.description

    def definition(self) -> dict[str, Any]:
        definition = self.remote.definition()
        if self.instructions:
            function = definition["function"]
            function["description"] = f"{function['description']}\n\n{self.instructions}"
        return definition

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        arguments = dict(args.model_extra or {})
        shown = json.dumps(arguments, ensure_ascii=False, indent=1)
        if len(shown) > MAX_SHOWN_ARGUMENT_CHARS:
            shown = shown[:MAX_SHOWN_ARGUMENT_CHARS] + f"\n… ({len(shown):,} characters)"
        request = ApprovalRequest(
            tool=self.name,
            kind="mcp",
            key=self.name,
            detail=shown,
            title=f"Call MCP tool {self.remote.name} of server {self.remote.server}",
        )
        if not await ctx.permissions.check(request):
            return ToolResult.error(f"the user denied calling {self.name}")
        try:
            result = await self.connection.call(self.remote.name, arguments)
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        # Images are named after the exposed tool name: the server's own may be anything.
        kept = read_result(result, self.max_result_chars, image_stem=self.name)
        meta = {**kept.meta, "mcp": {"server": self.remote.server, "tool": self.remote.name}}
        blobs = [image.data for image in kept.images]
        if kept.is_error:
            return ToolResult(content=f"Error: {kept.text}", is_error=True, meta=meta, blobs=blobs)
        return ToolResult(content=kept.text, meta=meta, blobs=blobs)
