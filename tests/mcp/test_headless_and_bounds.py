"""`cairn -p` waits (bounded) for MCP servers before its first request; names, schemas and
results are bounded whatever a server sends."""

from __future__ import annotations

import io
import re
import types

from agent.headless.run import run_headless
from agent.mcp.names import MAX_NAME_CHARS, unique_names
from agent.mcp.results import read_result
from agent.mcp.schema import PERMISSIVE_SCHEMA, bounded_description, bounded_schema, first_sentence
from agent.settings.config import load_settings
from tests.fakes.llm_server import text, tool_calls
from tests.mcp.conftest import mcp_flags, stdio_server, tool_names

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


async def test_headless_waits_for_servers_and_notes_failures(server, workspace):
    server.add(tool_calls([("c1", "mcp__fake__image", {})]), text("an image"))
    flags = {
        "model": "openai/fake-model",
        "api_base": server.base_url,
        "api_key": "sk-test",
        "yolo": True,
        **mcp_flags({"fake": stdio_server(), "broken": stdio_server("--exit-at-start")}),
    }
    out, err = io.StringIO(), io.StringIO()
    assert await run_headless(load_settings(workspace, flags=flags), "show me", out=out, err=err) == 0
    assert "mcp__fake__image" in tool_names(server.requests[0])  # ready before the first request
    assert "Note: MCP server 'broken' failed" in err.getvalue()
    sent = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert sent == "a pixel\n[image: mcp__fake__image-1.png, 1x1]"
    assert out.getvalue() == "an image\n"


def test_names_fit_every_provider():
    tools = ["ok", "bad name/with:punct", "bad_name_with_punct", "x" * 300, "x" * 301, "ünïcode", ""]
    names = unique_names("my server!", tools)
    assert len(set(names.values())) == len(tools)
    assert all(PROVIDER_NAME.match(n) and len(n) <= MAX_NAME_CHARS for n in names.values())
    assert names["ok"] == "mcp__my_server__ok"


def test_schemas_and_descriptions_are_bounded():
    deep: dict = {"type": "string"}
    for _ in range(40):
        deep = {"type": "object", "properties": {"x": deep}}
    assert bounded_schema(deep)[0] == PERMISSIVE_SCHEMA
    assert bounded_schema({"type": "string"})[0] == PERMISSIVE_SCHEMA
    assert bounded_schema(["not", "a", "dict"])[0] == PERMISSIVE_SCHEMA
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5_000)}}
    assert "characters" in bounded_schema(huge)[1]
    fine, note = bounded_schema({"type": "object", "properties": {"a": {"type": "integer"}}})
    assert note == "" and fine["properties"] == {"a": {"type": "integer"}}
    assert len(bounded_description("word " * 100_000)) == 2_000
    assert first_sentence("Lists issues. Then more text.") == "Lists issues."


def test_titles_are_dropped_but_names_enums_and_defaults_called_title_are_kept():
    """A Python server's schema (pydantic/FastMCP style) titles every property with its own
    name; those cost every request and are dropped. What only looks like a title stays."""
    server = {
        "type": "object",
        "title": "create_issueArguments",
        "required": ["title"],
        "properties": {
            "title": {"type": "string", "title": "Title"},
            "labels": {
                "type": "array",
                "title": "Labels",
                "items": {"$ref": "#/$defs/Label"},
                "default": [{"title": "bug"}],
            },
            "kind": {"enum": [{"title": "a"}, "b"], "title": "Kind"},
        },
        "$defs": {
            "Label": {"type": "object", "title": "Label", "properties": {"title": {"type": "string", "title": "Title"}}}
        },
    }
    sent, note = bounded_schema(server)
    assert note == ""
    assert sent == {
        "type": "object",
        "required": ["title"],
        "properties": {
            "title": {"type": "string"},
            "labels": {"type": "array", "items": {"$ref": "#/$defs/Label"}, "default": [{"title": "bug"}]},
            "kind": {"enum": [{"title": "a"}, "b"]},
        },
        "$defs": {"Label": {"type": "object", "properties": {"title": {"type": "string"}}}},
    }
    assert list(sent["properties"]) == ["title", "labels", "kind"]  # the server's order


def test_results_are_text_and_cut():
    blocks = [
        types.SimpleNamespace(type="text", text="x" * 5_000),
        types.SimpleNamespace(type="audio", data="AAAA", mime_type="audio/wav"),
        types.SimpleNamespace(type="resource", resource=types.SimpleNamespace(uri="file:///a", text="body")),
    ]
    kept = read_result(types.SimpleNamespace(content=blocks, is_error=False), 3_000, image_stem="t")
    assert kept.text.startswith("x" * 3_000) and "cairn keeps the first 3,000" in kept.text
    assert kept.meta["mcp_cut_chars"] > 5_000 and kept.meta["mcp_content"] == ["audio", "resource"]
    assert not kept.is_error and kept.images == []
    kept = read_result(types.SimpleNamespace(content=[], structured_content={"a": 1}), 100, image_stem="t")
    assert kept.text == '{"a": 1}'
