"""A real MCP server over stdio, driven through litellm and the fake LLM server: the model
lists and calls a tool and the result reaches the next request; a crash mid-call, a hang and
a 10 MB result each end as an `Error:` or bounded result and the session goes on."""

from __future__ import annotations

import re

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.mcp.conftest import mcp_flags, of_type, stdio_server, tool_names

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


async def open_with(open_runtime, servers, *, yolo=True, **mcp):
    runtime = await open_runtime(yolo=yolo, flags=mcp_flags(servers, **mcp))
    await runtime.wait_for_mcp()
    return runtime


async def test_model_lists_and_calls_a_tool(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__echo", {"text": "hello"})]), text("done"))
    runtime = await open_with(open_runtime, {"fake": stdio_server()})
    try:
        assert [s.state for s in runtime.mcp_status()] == ["ready"]
        await runtime.submit(Prompt("say hello through the server"))
    finally:
        await runtime.close()
    first, second = server.requests
    assert "mcp__fake__echo" in tool_names(first)
    echo = next(t for t in first["tools"] if t["function"]["name"] == "mcp__fake__echo")
    assert echo["function"]["parameters"]["properties"] == {"text": {"type": "string"}}
    assert "mcp-tool-schema" not in tool_names(first)  # a small server is sent inline
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "echo: hello"
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


async def test_crash_mid_call_gives_an_error_and_the_session_goes_on(server, open_runtime, tmp_path):
    calls = tmp_path / "calls.txt"
    server.add(tool_calls([("c1", "mcp__fake__crash", {})]), text("the server crashed"), text("still here"))
    runtime = await open_with(open_runtime, {"fake": stdio_server("--calls", str(calls))})
    try:
        await runtime.submit(Prompt("crash it"))
        await runtime.submit(Prompt("and now?"))
    finally:
        await runtime.close()
    assert calls.read_text().split() == ["crash"]  # the call reached the server before it died
    (finished,) = of_type(runtime.events, "tool_finished")
    assert finished.message.status == "error"
    assert finished.message.content.startswith("Error: MCP server 'fake' stopped while running crash")
    notices = [e.message for e in of_type(runtime.events, "notice")]
    assert any(n.startswith("MCP server 'fake' failed") for n in notices)
    assert [s.state for s in runtime.mcp_status()] == ["failed"]
    # Its tools are withdrawn from the next requests; the turns still finish.
    assert not [n for n in tool_names(server.requests[1]) if n.startswith("mcp__")]
    assert not [n for n in tool_names(server.requests[2]) if n.startswith("mcp__")]
    assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["ok", "ok"]


async def test_a_hanging_call_is_timed_out(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__hang", {})]), text("gave up"))
    runtime = await open_with(open_runtime, {"fake": stdio_server(timeout=1)})
    try:
        await runtime.submit(Prompt("hang"))
        (finished,) = of_type(runtime.events, "tool_finished")
        assert finished.message.content == "Error: MCP server 'fake' did not answer within 1 s"
        assert [s.state for s in runtime.mcp_status()] == ["ready"]  # one slow call: still usable
    finally:
        await runtime.close()
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


async def test_a_10_mb_result_is_bounded(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__big", {})]), text("big"))
    runtime = await open_with(open_runtime, {"fake": stdio_server()}, max_result_chars=200_000)
    try:
        await runtime.submit(Prompt("big"))
    finally:
        await runtime.close()
    (finished,) = of_type(runtime.events, "tool_finished")
    stored = finished.message.content
    assert len(stored) < 200_500 and "the result was 10,485,760 characters" in stored
    sent = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert len(sent) < 10_000 and "art-" in sent  # externalised like any large output


async def test_hostile_tools_are_bounded(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__echo", {"text": "ok"})]), text("fine"))
    runtime = await open_with(open_runtime, {"fake": stdio_server("--hostile")}, inline_tool_tokens=1_000_000)
    try:
        await runtime.submit(Prompt("go"))
    finally:
        await runtime.close()
    tools = server.requests[0]["tools"]
    mcp = {t["function"]["name"]: t["function"] for t in tools if t["function"]["name"].startswith("mcp__")}
    assert all(PROVIDER_NAME.match(n) for n in mcp)
    assert all(len(f["description"]) <= 2_000 for f in mcp.values())
    assert mcp["mcp__fake__deep"]["parameters"] == {"type": "object", "additionalProperties": True}
    assert mcp["mcp__fake__wide"]["parameters"] == {"type": "object", "additionalProperties": True}
    assert "nested deeper" in mcp["mcp__fake__deep"]["description"]
    assert len(str(tools)) < 100_000
    assert next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"] == "echo: ok"


async def test_a_server_that_cannot_start_is_one_notice(server, open_runtime):
    runtime = await open_with(
        open_runtime, {"gone": stdio_server("--exit-at-start"), "missing": {"command": "/nonexistent/cairn-mcp-server"}}
    )
    try:
        states = {s.name: (s.state, s.error) for s in runtime.mcp_status()}
    finally:
        await runtime.close()
    assert states["gone"][0] == "failed" and "refusing to start" in states["gone"][1]
    assert states["missing"][0] == "failed" and "No such file" in states["missing"][1]
    notices = [e.message for e in of_type(runtime.events, "notice")]
    assert len([n for n in notices if n.startswith("MCP server")]) == 2
    assert all("\n" not in n for n in notices)


async def test_a_server_that_never_answers_at_start_is_timed_out(server, open_runtime):
    flags = mcp_flags({"mute": {"command": "sleep", "args": ["600"]}})
    flags["mcp"]["startup_timeout"] = 1
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.wait_for_mcp()
        (status,) = runtime.mcp_status()
    finally:
        await runtime.close()
    assert (status.state, status.error) == ("failed", "did not start within 1 s")


async def test_context_report_counts_the_servers_tools(server, open_runtime):
    """`/context` builds the next request with the agent's own tools, the MCP ones included."""
    runtime = await open_with(open_runtime, {"fake": stdio_server()})
    try:
        with_mcp = (await runtime.context_report())["tokens"]["tools"]
        await runtime.mcp.close()
        runtime.agent.registry.set_group("mcp", [])
        without = (await runtime.context_report())["tokens"]["tools"]
    finally:
        await runtime.close()
    assert with_mcp > without > 0
