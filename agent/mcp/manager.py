"""The MCP servers of one running cairn: started in the background, their tools registered.

The Runtime owns one manager. `start()` is called once the first screen is drawn (and by
`cairn -p` before its first request, which then waits a bounded time with `wait_ready`);
nothing here delays the screen. Each change of a server's state re-registers the tools of
the servers that are ready (the registry's "mcp" group) and a failure becomes one notice
line; `/mcp` reads `status()` and calls `restart()`. The servers' prompts are commands
(`prompts()`; agent/mcp/commands.py); a server's instructions travel with its tools.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.mcp import instructions
from agent.mcp.client_requests import Elicit
from agent.mcp.connection import ServerConnection
from agent.mcp.prompts import RemotePrompt
from agent.mcp.servers import McpJsonState, read_mcp_json, server_specs, trust_mcp_json
from agent.settings.schema import McpServerSettings, Settings

log = logging.getLogger("agent.mcp")

REGISTRY_GROUP = "mcp"
Notify = Callable[[str, str], None]  # (message, kind: "info" | "warning")


class ServerStatus(BaseModel):
    """One line of `/mcp`."""

    name: str
    state: str
    transport: str
    source: str
    tools: list[str]
    error: str = ""
    prompts: list[str] = []  # its prompts as commands (`mcp__server__prompt`)


class McpManager:
    def __init__(
        self,
        settings: Settings,
        *,
        on_tools: Callable[[list[Any]], None],
        notify: Notify,
        log_dir: Path | None = None,
        editor: dict[str, McpServerSettings] | None = None,
        elicit: Elicit | None = None,
    ) -> None:
        """`editor`: the servers an ACP client passed for this session (servers.py `server_specs`).
        `elicit`: the front end's form for a server's elicitation (None: declined with a reason)."""
        if log_dir is None:
            from agent.paths import data_dir

            log_dir = data_dir() / "logs"
        self.settings = settings
        self.editor = dict(editor or {})
        self.on_tools = on_tools
        self.notify = notify
        self.log_dir = log_dir
        self.elicit = elicit
        self.connections: dict[str, ServerConnection] = {}
        self.problems: list[str] = []
        self.mcp_json: McpJsonState | None = None
        self.started = False
        self._load()

    def _load(self) -> None:
        self.mcp_json = read_mcp_json(self.settings.workspace)
        specs, self.problems = server_specs(self.settings, mcp_json=self.mcp_json, editor=self.editor)
        self.connections = {
            spec.name: ServerConnection(
                spec,
                startup_timeout=self.settings.mcp.startup_timeout,
                log_dir=self.log_dir,
                on_change=self._changed,
                workspace=Path(self.settings.workspace),
                elicit=self.elicit,
                told=lambda message: self.notify(message, "warning"),
            )
            for spec in specs
        }

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        """Start every configured server (in the background); say what was left out."""
        if self.started:
            return
        self.started = True
        for problem in self.problems:
            self.notify(problem, "warning")
        for connection in self.connections.values():
            connection.start()

    async def wait_ready(self, timeout: float) -> None:
        """Wait until every server is ready or failed, at most `timeout` seconds."""
        self.start()
        waits = [asyncio.ensure_future(c.settled.wait()) for c in self.connections.values() if c.state == "starting"]
        if not waits:
            return
        _, pending = await asyncio.wait(waits, timeout=timeout)
        for wait in pending:
            wait.cancel()

    async def restart(self, name: str) -> ServerConnection:
        """Stop and start one server again (KeyError when there is none of that name)."""
        connection = self.connections[name]
        await connection.restart()
        return connection

    async def trust_project_servers(self) -> int:
        """`/mcp trust`: record the project's `.mcp.json` as trusted as it is now, and start its
        servers. Returns how many servers it adds (raises OSError when it cannot be recorded)."""
        if self.mcp_json is None:
            return 0
        trust_mcp_json(self.mcp_json)
        before = set(self.connections)
        kept = self.connections
        self._load()
        for name, connection in kept.items():  # running servers keep their connection
            if name in self.connections:
                self.connections[name] = connection
        added = [c for n, c in self.connections.items() if n not in before]
        for connection in added:
            connection.start()
        return len(added)

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

    # -- what is there ----------------------------------------------------------------
    def status(self) -> list[ServerStatus]:
        return [
            ServerStatus(
                name=c.name,
                state=c.state,
                transport=c.spec.transport,
                source=c.spec.source,
                tools=[t.exposed for t in c.tools],
                error=c.error,
                prompts=[p.command for p in c.prompts],
            )
            for c in self.connections.values()
        ]

    def tools(self) -> list[Any]:
        """The tools of the servers that are ready (McpTool), the loader first."""
        from agent.mcp.loader import McpToolSchema
        from agent.mcp.tool import McpTool

        limit = self.settings.mcp.max_result_chars
        tools: list[Any] = []
        said: list[str] = []
        for c in self.connections.values():
            if c.state != "ready":
                continue
            told = instructions.block(c.name, c.instructions)
            said += [told] if told and c.tools else []
            first = min((t.exposed for t in c.tools), default="")  # the instructions go with one tool of it
            tools += [
                McpTool(remote, c, max_result_chars=limit, instructions=told if remote.exposed == first else "")
                for remote in c.tools
            ]
        if not tools:
            return []
        return [McpToolSchema(self.definitions, instructions="\n\n".join(said)), *tools]

    def prompts(self) -> list[RemotePrompt]:
        """The prompts of the servers that are ready, as commands (`/mcp__server__prompt`)."""
        return [p for c in self.connections.values() if c.state == "ready" for p in c.prompts]

    def definitions(self) -> dict[str, dict[str, Any]]:
        return {t.exposed: t.definition() for c in self.connections.values() if c.state == "ready" for t in c.tools}

    def _changed(self, connection: ServerConnection) -> None:
        if connection.state == "failed":
            self.notify(
                f"MCP server '{connection.name}' failed: {connection.error}. Its tools are withdrawn; "
                f"/mcp restart {connection.name} tries again.",
                "warning",
            )
        elif connection.state == "ready":
            log.info("MCP server %s ready with %d tools", connection.name, len(connection.tools))
        try:
            self.on_tools(self.tools())
        except Exception:
            log.exception("registering MCP tools failed")
