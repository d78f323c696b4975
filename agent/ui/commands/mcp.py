"""/mcp: the MCP servers, their state and tools; `/mcp restart NAME`; `/mcp trust` (the
project's `.mcp.json`, as it is now)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.runtime.ops import RestartMcp, TrustMcpJson
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host

MAX_TOOLS_SHOWN = 12
USAGE = "/mcp · /mcp restart NAME · /mcp trust"


def describe(statuses: list, problems: list[str]) -> str:
    if not statuses and not problems:
        return (
            "No MCP servers configured. Add [mcp.servers.NAME] to config.toml (command/args or url), "
            'or a .mcp.json to the project (see README, "MCP servers").'
        )
    lines = ["MCP servers:"]
    for s in statuses:
        lines.append(
            f"  {s.name}  {s.state}  ({s.transport}, {s.source}, {len(s.tools)} tools)"
            + (f": {s.error}" if s.error else "")
        )
        shown = ", ".join(s.tools[:MAX_TOOLS_SHOWN])
        if shown:
            more = f" and {len(s.tools) - MAX_TOOLS_SHOWN} more" if len(s.tools) > MAX_TOOLS_SHOWN else ""
            lines.append(f"    {shown}{more}")
        prompts = s.prompts
        if prompts:
            more = f" and {len(prompts) - MAX_TOOLS_SHOWN} more" if len(prompts) > MAX_TOOLS_SHOWN else ""
            lines.append(f"    prompts: {', '.join('/' + p for p in prompts[:MAX_TOOLS_SHOWN])}{more}")
    lines += [f"  note: {p}" for p in problems]
    lines.append(USAGE)
    return "\n".join(lines)


async def run(app: Host, args: str) -> None:
    runtime = app.runtime
    if runtime is None:
        app.notice_not_ready()
        return
    verb, _, name = args.strip().partition(" ")
    name = name.strip()
    if not verb:
        app.chat.add_notice(describe(runtime.mcp_status(), runtime.mcp_problems()), kind="help")
    elif verb == "restart" and name:
        app.chat.add_notice(f"Restarting MCP server {name}…")
        try:
            state = await runtime.submit(RestartMcp(name))
        except KeyError:
            app.chat.add_notice(f"No MCP server named {name!r}. /mcp lists them.", kind="warning")
            return
        app.chat.add_notice(f"MCP server {name}: {state}", kind="info" if state == "ready" else "warning")
    elif verb == "trust" and not name:
        try:
            added = await runtime.submit(TrustMcpJson())
        except OSError as exc:
            app.chat.add_notice(f"Could not record the trust: {exc.strerror or exc}", kind="warning")
            return
        app.chat.add_notice(
            f"Trusted .mcp.json as it is now; starting {added} server(s)."
            if added
            else "Nothing to trust: no untrusted .mcp.json servers in this folder."
        )
    else:
        app.chat.add_notice(f"Usage: {USAGE}", kind="warning")


COMMAND = Command(
    "mcp", "MCP servers: list, restart one, trust the project's .mcp.json", run, usage="[restart NAME | trust]"
)
