"""The TUI: servers start behind the first screen, a failure is one notice line, `/mcp`
lists servers, state and tools, and restarts one."""

from __future__ import annotations

from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from tests.mcp.conftest import mcp_flags, stdio_server
from tests.ui.conftest import send, wait_for, wait_ready

SIZE = (120, 36)
MCP_TIMEOUT = 120.0  # the fake server is a Python process importing the SDK on a loaded machine


def notices(app, kind=None) -> list[str]:
    return [n.text for n in app.chat.query(Notice) if kind is None or n.kind == kind]


async def test_mcp_command_lists_and_restarts(server, workspace):
    flags = {
        "model": "openai/fake",
        "api_base": server.base_url,
        "api_key": "sk-test",
        **mcp_flags({"fake": stdio_server(), "broken": stdio_server("--exit-at-start")}),
    }
    app = CairnApp(load_settings(workspace, flags=flags))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        runtime = app.runtime
        await wait_for(
            pilot,
            lambda: {s.state for s in runtime.mcp_status()} == {"ready", "failed"},
            MCP_TIMEOUT,
            "the servers to settle",
        )
        await wait_for(
            pilot,
            lambda: any("MCP server 'broken' failed" in n for n in notices(app, "warning")),
            what="the failure notice",
        )
        await send(pilot, "/mcp")
        await wait_for(
            pilot, lambda: any(n.startswith("MCP servers:") for n in notices(app, "help")), what="the /mcp list"
        )
        listing = next(n for n in notices(app, "help") if n.startswith("MCP servers:"))
        assert "fake  ready  (stdio, config.toml, 6 tools)" in listing
        assert "mcp__fake__echo" in listing and "broken  failed" in listing
        await send(pilot, "/mcp restart fake")
        await wait_for(pilot, lambda: "MCP server fake: ready" in notices(app), MCP_TIMEOUT, "the restart")
        assert "mcp__fake__echo" in runtime.agent.registry.names
        await send(pilot, "/mcp restart nosuch")
        await wait_for(
            pilot,
            lambda: any("No MCP server named 'nosuch'" in n for n in notices(app)),
            what="the unknown-server notice",
        )
