"""In the TUI, a server's elicitation is a form the user answers (the answer goes back to the
server's tool and so to the model), and its prompts are `/mcp__server__prompt` commands."""

from __future__ import annotations

from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.screens.elicit import ElicitScreen
from tests.fakes.llm_server import text, tool_calls
from tests.mcp.conftest import mcp_flags, stdio_server
from tests.ui.conftest import chat_text, send, wait_for, wait_ready

SIZE = (100, 30)
SLOW = 120  # the fake server is a Python process importing the SDK on a loaded machine


def _app(server, workspace) -> CairnApp:
    flags = {"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test", "yolo": True}
    return CairnApp(load_settings(workspace, flags={**flags, **mcp_flags({"fake": stdio_server("--extras")})}))


async def _servers_ready(app, pilot) -> None:
    await wait_for(pilot, lambda: app.runtime is not None and app.runtime.mcp_prompts(), SLOW, "the MCP server")


async def test_a_servers_form_is_answered_in_the_tui_and_the_answer_reaches_the_model(server, workspace):
    server.add(tool_calls([("c1", "mcp__fake__ask", {})]), text("Hello Ada."))
    app = _app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await _servers_ready(app, pilot)
        await send(pilot, "greet me")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitScreen), SLOW, "the form")
        assert "MCP server 'fake' asks" in app.screen.query_one("#elicit-title").render().plain
        assert "Who are you?" in app.screen.query_one("#elicit-message").render().plain
        await pilot.press("A", "d", "a", "enter")
        await wait_for(pilot, lambda: not app.turn_running and len(server.requests) >= 2, SLOW, "the turn")
    result = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert result == ["elicitation: accept {'name': 'Ada'}"]


async def test_an_mcp_prompt_is_a_tui_command(server, workspace):
    server.add(text("reviewed"))
    app = _app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await _servers_ready(app, pilot)
        await send(pilot, "/mcp__fake__review src/app.py errors")
        await wait_for(pilot, lambda: len(server.requests) >= 1 and not app.turn_running, SLOW, "the turn")
        await send(pilot, "/mcp")
        await wait_for(pilot, lambda: "prompts: /mcp__fake__review" in chat_text(app), what="the /mcp list")
    sent = [m for m in server.requests[0]["messages"] if m["role"] == "user"][-1]["content"]
    assert "Review src/app.py for errors.\n\nBe brief." in str(sent)
