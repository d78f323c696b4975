"""Streamable HTTP servers with headers; where servers may come from (user config always,
the project's only once trusted); approvals by name."""

from __future__ import annotations

import json

from agent.mcp.servers import read_mcp_json, server_specs, trust_mcp_json
from agent.runtime.ops import Prompt
from agent.settings.config import load_settings
from tests.fakes.llm_server import text, tool_calls
from tests.mcp.conftest import mcp_flags, of_type, stdio_server, tool_names


async def test_http_server_with_a_token_header(server, open_runtime, http_server, monkeypatch):
    url = http_server("--require-header", "Authorization=Bearer s3cret")
    monkeypatch.setenv("FAKE_MCP_TOKEN", "s3cret")
    server.add(tool_calls([("c1", "mcp__web__echo", {"text": "over http"})]), text("done"))
    servers = {"web": {"url": url, "headers": {"Authorization": "Bearer ${FAKE_MCP_TOKEN}"}}, "nokey": {"url": url}}
    runtime = await open_runtime(flags=mcp_flags(servers))
    await runtime.wait_for_mcp()
    try:
        states = {s.name: s.state for s in runtime.mcp_status()}
        await runtime.submit(Prompt("go"))
    finally:
        await runtime.close()
    assert states == {"web": "ready", "nokey": "failed"}
    assert "mcp__web__echo" in tool_names(server.requests[0])
    assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__nokey__")]
    assert next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"] == "echo: over http"


def _write_project(workspace, servers: dict) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_project_servers_need_trust(workspace):
    cairn = workspace / ".cairn"
    cairn.mkdir()
    (cairn / "config.toml").write_text('[mcp.servers.repo]\ncommand = "./evil.sh"\n')
    _write_project(workspace, {"fromjson": {"command": "./also-evil.sh"}, "sse": {"type": "sse", "url": "http://x"}})
    settings = load_settings(workspace)
    assert settings.mcp.servers == {}  # the untrusted project config's servers are left out
    state = read_mcp_json(workspace)
    specs, problems = server_specs(settings, mcp_json=state)
    assert specs == [] and any("not trusted" in p for p in problems)
    assert any("'sse'" in p for p in problems)
    # Trusted as it is now: its servers apply; a changed file is untrusted again.
    trust_mcp_json(state)
    specs, _ = server_specs(settings, mcp_json=read_mcp_json(workspace))
    assert [(s.name, s.source, s.command) for s in specs] == [("fromjson", ".mcp.json", "./also-evil.sh")]
    _write_project(workspace, {"fromjson": {"command": "./changed.sh"}})
    assert read_mcp_json(workspace).trusted is False


def test_user_config_servers_always_apply(workspace, monkeypatch):
    from agent.paths import config_dir

    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(
        '[mcp.servers.mine]\ncommand = "srv"\nargs = ["--root", "${HOME}"]\nenv = {TOKEN = "${NOPE:-fallback}"}\n'
        '[mcp.servers.off]\ncommand = "x"\nenabled = false\n'
    )
    monkeypatch.setenv("HOME", "/home/someone")
    specs, problems = server_specs(load_settings(workspace))
    assert [(s.name, s.args, s.env, s.source) for s in specs] == [
        ("mine", ["--root", "/home/someone"], {"TOKEN": "fallback"}, "config.toml")
    ]
    assert problems == []


async def test_mcp_tools_ask_unless_allowed_by_name(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__echo", {"text": "a"}), ("c2", "mcp__fake__fail", {})]), text("done"))
    flags = mcp_flags({"fake": stdio_server()})
    flags["permissions"] = {"allow": ["mcp__fake__echo"]}
    runtime = await open_runtime(yolo=False, flags=flags)
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("go"))
    finally:
        await runtime.close()
    echo, fail = (e.message for e in of_type(runtime.events, "tool_finished"))
    assert echo.content == "echo: a" and echo.meta["permission"]["decision"] == "rule"
    assert fail.status == "error" and fail.meta["permission"]["decision"] == "refused"


async def test_a_server_wildcard_allows_every_tool_and_is_error_results_are_errors(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__fail", {})]), text("done"))
    flags = mcp_flags({"fake": stdio_server()})
    flags["permissions"] = {"allow": ["mcp__fake__*"]}
    runtime = await open_runtime(yolo=False, flags=flags)
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("go"))
    finally:
        await runtime.close()
    (fail,) = (e.message for e in of_type(runtime.events, "tool_finished"))
    assert fail.content == "Error: it went wrong" and fail.status == "error"
    assert fail.meta["mcp"] == {"server": "fake", "tool": "fail"}
