"""Seed 004 `catalog`: a 90-tool server costs one line per tool until the model loads a schema;
loaded schemas stay in the tool list (which only grows, in a stable order) for the session."""

from __future__ import annotations

from agent.context.tokens import counter_for
from agent.mcp.catalog import CatalogState, request_tools
from agent.runtime.ops import Prompt
from agent.session.models import Message
from tests.fakes.llm_server import text, tool_calls
from tests.mcp.conftest import mcp_flags, of_type, stdio_server, tool_names

NINETY = stdio_server("--many", "90")


async def test_ninety_tools_go_as_a_catalog_and_a_loaded_schema_stays(server, open_runtime):
    server.add(
        tool_calls([("c1", "mcp-tool-schema", {"names": ["mcp__fake__get_issue"]})]),
        tool_calls([("c2", "mcp__fake__get_issue", {"workspace_id": "w1"})]),
        text("done"),
        text("again"),
    )
    runtime = await open_runtime(flags=mcp_flags({"fake": NINETY}))
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("get an issue"))
        await runtime.submit(Prompt("once more"))
    finally:
        await runtime.close()
    first, second, third, fourth = server.requests
    assert not [n for n in tool_names(first) if n.startswith("mcp__")]
    loader = next(t for t in first["tools"] if t["function"]["name"] == "mcp-tool-schema")
    lines = [line for line in loader["function"]["description"].splitlines() if line.startswith("- mcp__fake__")]
    assert len(lines) == 90
    assert "- mcp__fake__get_issue: Get a issue in the tracker." in lines
    # Loaded: appended after what was sent before, so the earlier tools are a prefix.
    assert tool_names(second) == tool_names(first) + ["mcp__fake__get_issue"]
    assert second["tools"][: len(first["tools"])] == first["tools"]
    assert third["tools"] == second["tools"] and fourth["tools"] == second["tools"]
    results = [m["content"] for m in third["messages"] if m["role"] == "tool"]
    assert results[-1] == "get_issue called with ['workspace_id']"
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


async def test_resumed_session_loads_its_schemas_back(server, open_runtime):
    server.add(
        tool_calls([("c1", "mcp-tool-schema", {"names": ["mcp__fake__list_user"]})]), text("ok"), text("resumed")
    )
    runtime = await open_runtime(flags=mcp_flags({"fake": NINETY}))
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("load"))
        session_id = runtime.session.id
    finally:
        await runtime.close()
    runtime = await open_runtime(flags=mcp_flags({"fake": NINETY}), resume_id=session_id)
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("after resume"))
    finally:
        await runtime.close()
    assert tool_names(server.requests[-1])[-1] == "mcp__fake__list_user"


def _definition(name: str, words: int = 10) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} does things. " + "w " * words,
            "parameters": {"type": "object", "properties": {}},
        },
    }


def test_the_tool_list_only_grows_in_a_stable_order():
    counter = counter_for("o200k_base")
    base = [_definition("filesystem-read"), _definition("mcp-tool-schema")]
    state = CatalogState()
    small = base + [_definition("mcp__a__two"), _definition("mcp__a__one")]
    first = request_tools(state, small, inline_tokens=4_000, count=counter.count_tools)
    assert [t["function"]["name"] for t in first] == ["filesystem-read", "mcp__a__one", "mcp__a__two"]
    # A big server arrives: the catalog takes over, yet what was sent stays, in its place.
    big = small + [_definition(f"mcp__b__t{i:02d}", 200) for i in range(40)]
    second = request_tools(state, big, inline_tokens=4_000, count=counter.count_tools)
    assert [t["function"]["name"] for t in second] == [
        "filesystem-read",
        "mcp-tool-schema",
        "mcp__a__one",
        "mcp__a__two",
    ]
    state.read_history(
        [
            Message(
                role="tool",
                tool_name="mcp-tool-schema",
                tool_call_id="x",
                content="",
                meta={"mcp_loaded": ["mcp__b__t07", "mcp__b__t03"]},
            )
        ]
    )
    third = request_tools(state, big, inline_tokens=4_000, count=counter.count_tools)
    assert [t["function"]["name"] for t in third][2:] == ["mcp__a__one", "mcp__a__two", "mcp__b__t03", "mcp__b__t07"]
    assert request_tools(state, big, inline_tokens=4_000, count=counter.count_tools) == third
    # A failed server's tools are gone (they cannot be called); nothing else moves.
    without_a = [d for d in big if not d["function"]["name"].startswith("mcp__a__")]
    fourth = request_tools(state, without_a, inline_tokens=4_000, count=counter.count_tools)
    assert [t["function"]["name"] for t in fourth][2:] == ["mcp__b__t03", "mcp__b__t07"]


def test_ninety_tool_figure(capsys):
    """The closing note's figure: tokens of the tool list per request, inline vs catalog."""
    from agent.mcp.connection import RemoteTool
    from agent.mcp.loader import McpToolSchema
    from agent.tools.registry import default_registry
    from tests.fakes.mcp_server import many_tools

    counter = counter_for("o200k_base")
    builtin = default_registry().definitions()
    remote = [
        RemoteTool(
            server="fake",
            name=t["name"],
            exposed=f"mcp__fake__{t['name']}",
            description=t["description"],
            schema=t["inputSchema"],
        ).definition()
        for t in many_tools(90)
    ]
    everything = builtin + [McpToolSchema(dict).definition()] + remote
    inline = request_tools(CatalogState(), everything, inline_tokens=10**9, count=counter.count_tools)
    catalog = request_tools(CatalogState(), everything, inline_tokens=4_000, count=counter.count_tools)
    base = counter.count_tools(builtin)
    inline_tokens, catalog_tokens = counter.count_tools(inline), counter.count_tools(catalog)
    with capsys.disabled():
        print(
            f"\n90-tool MCP server, tool tokens per request: built-in tools {base:,}; inline "
            f"{inline_tokens:,} (MCP {inline_tokens - base:,}); catalog {catalog_tokens:,} "
            f"(MCP {catalog_tokens - base:,})"
        )
    assert catalog_tokens - base < (inline_tokens - base) / 4
