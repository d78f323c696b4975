"""The `subagent` tool (SPEC §13.3): what the model calls to hand a task to a child agent.

The tool only names the work; the loop's child runner (agent/turn/children.py, reached as
`ToolContext.subagents`) runs it, because a child is a whole conversation: store, model,
permissions. Its description lists the agents, so the model knows what it may ask for;
past the listing's budget the rest are named and counted, `query` searches them all, and any
agent runs by its exact name (agent/skills/listing.py). The loop makes a new tool only when
the definitions changed (`stamp`; agent/turn/loop.py `_offer_subagents`): its description is
part of the cached prefix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pydantic import Field

from agent.skills.listing import found_text, search
from agent.subagents.definitions import AgentDefinition, Stamp, catalog, entries, load_definitions
from agent.subagents.definitions import stamp as folders_stamp
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agent.tools.permissions import current_call

NAME = "subagent"
DEFAULT_AGENT = "general"
MAX_NAMES_IN_ERROR = 40
PROMPT = (Path(__file__).with_name("subagent.md")).read_text(encoding="utf-8").rstrip("\n")


class SubagentArgs(ToolArgs):
    agent: str = Field(
        DEFAULT_AGENT, description="Which agent runs the task: its exact name (listed in the description or not)."
    )
    task: str = Field("", description="The complete brief: what to find or do, what is known, what to report.")
    query: str = Field(
        "",
        description="Instead of a task: words to search every agent's name and description for, when none "
        "listed fits or the list says some are not described. Nothing runs.",
    )


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
        self.stamp: Stamp | None = None  # the folders as they were when `definitions` were read (None: never read)
        self.description = f"{PROMPT}\n{catalog(definitions)}"

    def refresh(self, workspace: Path) -> bool:
        """The definitions read again when their folders changed since they were read (the same
        tool, a new list: a registry a front end rebuilt keeps it); True when the listing the
        model reads changed."""
        now = folders_stamp(workspace)
        if now == self.stamp:
            return False
        before = self.description
        self.definitions = load_definitions(workspace)
        self.stamp = now
        self.description = f"{PROMPT}\n{catalog(self.definitions)}"
        return self.description != before

    async def run(self, args: SubagentArgs, ctx: ToolContext) -> ToolResult:
        if args.query.strip() and not args.task.strip():
            found = search(entries(self.definitions), args.query)
            use = "Run one with subagent, its name as `agent` and the brief as `task`."
            total = len(self.definitions)
            return ToolResult(content=found_text(found, query=args.query, total=total, noun="agent", use=use))
        name = args.agent.strip() or DEFAULT_AGENT
        definition = self.definitions.get(name) or _by_folded_name(self.definitions, name)
        if definition is None:
            close = [e.name for e in search(entries(self.definitions), name.replace("-", " "))]
            names = close or list(self.definitions)
            shown = ", ".join(names[:MAX_NAMES_IN_ERROR]) + (", …" if len(names) > MAX_NAMES_IN_ERROR else "")
            raise ToolError(f"no agent named {name[:60]!r}. Agents: {shown} (subagent with `query` searches them all)")
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
