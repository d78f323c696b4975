"""`mcp-tool-schema`: the catalog's loader (seed 004 `catalog`).

When MCP tool definitions would cost more than `mcp.inline_tool_tokens` per request, the
request carries one line per MCP tool and this tool; the model loads the schemas it needs.
The result records the names it loaded (`meta["mcp_loaded"]`): the session's request
builder reads them from the history, so loaded tools stay in the tool list for the rest of
the session, resumed sessions included (agent/mcp/catalog.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult

LOADER_NAME = "mcp-tool-schema"
LOADED_META = "mcp_loaded"
MAX_NAMES_PER_CALL = 20
DESCRIPTION = (Path(__file__).with_name("mcp_tool_schema.md")).read_text(encoding="utf-8").strip()


class LoadArgs(ToolArgs):
    names: list[str] = Field(
        min_length=1,
        max_length=MAX_NAMES_PER_CALL,
        description='Exact names of the MCP tools to load, e.g. ["mcp__github__list_issues"].',
    )


class McpToolSchema(Tool):
    name = LOADER_NAME
    description = DESCRIPTION
    Args = LoadArgs

    def __init__(self, definitions: Callable[[], dict[str, dict[str, Any]]], instructions: str = "") -> None:
        self._definitions = definitions  # exposed name -> definition, of the servers now ready
        # The servers' instructions (agent/mcp/instructions.py): after the catalog's lines.
        self.instructions = instructions
        if instructions:
            self.description = f"{DESCRIPTION}\n\n{instructions}"

    async def run(self, args: LoadArgs, ctx: ToolContext) -> ToolResult:
        available = self._definitions()
        wanted = list(dict.fromkeys(args.names))
        found = [n for n in wanted if n in available]
        missing = [n for n in wanted if n not in available]
        if not found:
            raise ToolError(f"no MCP tool named {', '.join(missing)[:300]}; the names are in this tool's description")
        schemas = [
            {
                "name": n,
                "description": available[n]["function"]["description"],
                "parameters": available[n]["function"]["parameters"],
            }
            for n in found
        ]
        text = f"Loaded {len(found)} MCP tool schema(s); call them by name from now on.\n" + json.dumps(
            schemas, ensure_ascii=False, indent=1
        )
        if missing:
            text += f"\nNot found: {', '.join(missing)[:300]}"
        return ToolResult(content=text, meta={LOADED_META: found})
