"""The ready servers' prompts as a command source: `/mcp__server__prompt args` (Claude Code's).

The runtime looks a typed command up in its sources (agent/commands/invocation.py: command
files, skills, then this); the TUI's `/` popup and `/help` list them the same way. A prompt's
text comes from the server (`prompts/get`), so it is fetched when the turn starts, not when
the command is found: `McpExpansion.message` asks the server. What goes wrong (a required
argument left out, a server that failed or refused) is `McpCallError`, which the runtime turns
into the turn's error: nothing is sent to the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.commands.inline import Runner
from agent.commands.invocation import ExpandContext, Expansion, Invocable, Listed, block
from agent.mcp.connection import McpCallError
from agent.mcp.prompts import RemotePrompt, arguments_for

if TYPE_CHECKING:
    from agent.mcp.manager import McpManager


@dataclass
class McpExpansion(Expansion):
    """An MCP prompt's expansion: its messages are asked of the server when the turn starts."""

    fetch: Callable[[], Awaitable[str]] | None = None

    async def message(self, run: Runner) -> str:
        """The prompt's messages (no `!` commands run in a server's text: it is not a command file)."""
        text = await self.fetch() if self.fetch is not None else ""
        return block(self.name, text, self.tail)


@dataclass
class McpPromptRun:
    manager: McpManager
    prompt: RemotePrompt

    @property
    def name(self) -> str:
        return self.prompt.command

    def expand(self, args: str, ctx: ExpandContext) -> Expansion:
        try:
            arguments = arguments_for(self.prompt, args)
        except ValueError as exc:
            raise McpCallError(str(exc)) from None
        connection = self.manager.connections[self.prompt.server]
        return McpExpansion(name=self.name, body="", fetch=lambda: connection.prompt(self.prompt.name, arguments))


@dataclass
class McpPromptCommands:
    """The prompts of the manager's servers that are ready (asked at each lookup: a server that
    comes up later adds its prompts, one that fails takes them away)."""

    manager: McpManager

    def find(self, name: str, notices: list[str]) -> Invocable | None:
        """`mcp__server__prompt`, or `server:prompt` as newer Claude Code versions name it."""
        found = next((p for p in self.manager.prompts() if name in (p.command, f"{p.server}:{p.name}")), None)
        return McpPromptRun(self.manager, found) if found is not None else None

    def listing(self, notices: list[str]) -> list[Listed]:
        return [
            Listed(p.command, f"{p.description} (MCP: {p.server})", p.hint, f"mcp:{p.server}")
            for p in self.manager.prompts()
        ]
