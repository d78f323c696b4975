"""The `subagent` tool (SPEC §13.3): what the model calls to hand a task to a child agent.

The tool only names the work; the loop's child runner (agent/turn/children.py, reached as
`ToolContext.subagents`) runs it, because a child is a whole conversation: store, model,
permissions. Its description lists the agents, so the model knows what it may ask for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from agent.subagents.definitions import AgentDefinition, catalog
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agent.tools.permissions import current_call

NAME = "subagent"
DEFAULT_AGENT = "general"
PROMPT = (Path(__file__).with_name("subagent.md")).read_text(encoding="utf-8").rstrip("\n")


class SubagentArgs(ToolArgs):
    agent: str = Field(DEFAULT_AGENT, description="Which agent runs the task (see the list in the description).")
    task: str = Field(description="The complete brief: what to find or do, what is known, what to report.")


class ChildRunner(Protocol):
    async def run(
        self, definition: AgentDefinition, task: str, *, call_id: str, progress: Any
    ) -> ToolResult:  # pragma: no cover - a protocol
        ...


class SubagentTool(Tool):
    name = NAME
    Args = SubagentArgs

    def __init__(self, definitions: dict[str, AgentDefinition], runner: ChildRunner) -> None:
        self.definitions = definitions
        self.runner = runner
        self.description = f"{PROMPT}\n{catalog(definitions)}"

    async def run(self, args: SubagentArgs, ctx: ToolContext) -> ToolResult:
        name = args.agent.strip() or DEFAULT_AGENT
        definition = self.definitions.get(name) or _by_folded_name(self.definitions, name)
        if definition is None:
            raise ToolError(f"no agent named {name[:60]!r}. Agents: {', '.join(self.definitions)}")
        if not args.task.strip():
            raise ToolError("the task is empty: write the complete brief for the agent.")
        call = current_call.get()
        call_id = call.call_id if call is not None and call.call_id else ""
        return await self.runner.run(definition, args.task, call_id=call_id, progress=ctx.progress)


def _by_folded_name(definitions: dict[str, AgentDefinition], name: str) -> AgentDefinition | None:
    """`Explore` or `general-purpose` (Claude Code's built-in names) find ours."""
    folded = name.lower()
    aliases = {"general-purpose": "general", "plan": "explore"}
    folded = aliases.get(folded, folded)
    return next((d for key, d in definitions.items() if key.lower() == folded), None)
