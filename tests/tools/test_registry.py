"""The registry turns every kind of bad call into an `Error:` result, never an exception."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import Field

from agent.session.models import ToolCall
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry, default_registry


class EchoArgs(ToolArgs):
    text: str = Field(description="Text to echo.")
    times: int = Field(default=1, description="How often.")


class Echo(Tool):
    name = "echo"
    description = "Echo text."
    Args = EchoArgs

    async def run(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        if args.text == "boom":
            raise RuntimeError("kaboom")
        if args.text == "refuse":
            raise ToolError("refused politely")
        if args.text == "sleep":
            await asyncio.sleep(100)
        return ToolResult(content=args.text * args.times)


@pytest.fixture
def ctx(workspace):
    return ToolContext(workspace=workspace, permissions=Permissions(None))


@pytest.fixture
def registry():
    return ToolRegistry([Echo()])


def call(name: str, arguments: str) -> ToolCall:
    return ToolCall(id="call_1", name=name, arguments=arguments)


async def test_success(registry, ctx):
    res = await registry.execute(call("echo", '{"text": "hi", "times": 2}'), ctx)
    assert res == ToolResult(content="hihi")


async def test_empty_arguments_mean_empty_object(registry, ctx):
    res = await registry.execute(call("echo", ""), ctx)
    assert res.is_error and res.content == "Error: invalid arguments for echo: text: missing required field"


async def test_unknown_tool(registry, ctx):
    res = await registry.execute(call("rm-rf", "{}"), ctx)
    assert res.is_error
    assert res.content == "Error: unknown tool 'rm-rf'. Available tools: echo"


async def test_invalid_json(registry, ctx):
    res = await registry.execute(call("echo", '{"text": "hi"'), ctx)
    assert res.is_error
    assert res.content.startswith("Error: invalid JSON in tool arguments: ")
    assert res.content.endswith(". Send the arguments as a JSON object.")


async def test_deeply_nested_json(registry, ctx):
    res = await registry.execute(call("echo", "[" * 100_000 + "]" * 100_000), ctx)
    assert res.is_error and res.content.startswith("Error: invalid JSON in tool arguments")


async def test_json_not_an_object(registry, ctx):
    res = await registry.execute(call("echo", '["hi"]'), ctx)
    assert res.is_error
    assert res.content == "Error: tool arguments must be a JSON object, got list. Send the arguments as a JSON object."


async def test_wrong_types(registry, ctx):
    res = await registry.execute(call("echo", '{"text": 5, "times": "many"}'), ctx)
    assert res.is_error
    assert res.content == (
        "Error: invalid arguments for echo: text: Input should be a valid string; "
        "times: Input should be a valid integer, unable to parse string as an integer"
    )


async def test_extra_keys_are_ignored(registry, ctx):
    res = await registry.execute(call("echo", '{"text": "a", "colour": "red"}'), ctx)
    assert res.content == "a"


async def test_huge_string_is_not_echoed_back(registry, ctx):
    huge = "x" * 5_000_000
    res = await registry.execute(call("echo", json.dumps({"text": "a", "times": huge})), ctx)
    assert res.is_error and len(res.content) < 500
    assert res.content.startswith("Error: invalid arguments for echo: times:")


async def test_tool_error(registry, ctx):
    res = await registry.execute(call("echo", '{"text": "refuse"}'), ctx)
    assert res.is_error and res.content == "Error: refused politely"


async def test_tool_bug_becomes_error(registry, ctx):
    res = await registry.execute(call("echo", '{"text": "boom"}'), ctx)
    assert res.is_error and res.content == "Error: echo failed: RuntimeError: kaboom"


async def test_cancellation_propagates(registry, ctx):
    task = asyncio.create_task(registry.execute(call("echo", '{"text": "sleep"}'), ctx))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_duplicate_names_rejected():
    with pytest.raises(ValueError):
        ToolRegistry([Echo(), Echo()])


def test_default_registry_definitions():
    reg = default_registry()
    names = [d["function"]["name"] for d in reg.definitions()]
    assert names == [
        "filesystem-read",
        "filesystem-edit",
        "filesystem-create",
        "terminal-execute",
        "context-list",
        "context-read",
        "context-tail",
        "context-grep",
        "filesystem-search",
        "filesystem-find",
        "web-fetch",
        "todo-write",
        "exit-plan-mode",
    ]
    for d in reg.definitions():
        assert d["type"] == "function"
        params = d["function"]["parameters"]
        assert params["type"] == "object"
        for prop in params["properties"].values():
            assert prop.get("description"), d["function"]["name"]
    edit = reg.get("filesystem-edit").definition()["function"]["parameters"]
    assert set(edit["properties"]) == {"filePath", "searchContent", "replaceContent", "replaceAll"}
    assert edit["required"] == ["filePath", "searchContent", "replaceContent"]
    assert reg.get("nope") is None


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("filesystem-read", "{}", "Error: invalid arguments for filesystem-read: filePath: missing required field"),
        ("filesystem-read", '{"filePath": null}', "Error: invalid arguments for filesystem-read: filePath:"),
        ("filesystem-read", '{"filePath": ""}', "Error: the path is empty"),
        (
            "filesystem-read",
            '{"filePath": "a", "startLine": 0}',
            "Error: invalid arguments for filesystem-read: startLine:",
        ),
        ("filesystem-read", '{"filePath": []}', "Error: filePath is an empty list"),
        (
            "filesystem-edit",
            '{"filePath": "a.txt"}',
            "Error: invalid arguments for filesystem-edit: searchContent: missing required field; "
            "replaceContent: missing required field",
        ),
        (
            "filesystem-create",
            '{"filePath": "a.txt", "content": 3}',
            "Error: invalid arguments for filesystem-create: content: Input should be a valid string",
        ),
        ("terminal-execute", '{"command": ""}', "Error: invalid arguments for terminal-execute: command:"),
        (
            "terminal-execute",
            '{"command": "ls", "timeout": -1}',
            "Error: invalid arguments for terminal-execute: timeout:",
        ),
        (
            "terminal-execute",
            '{"command": "ls", "timeout": "soon"}',
            "Error: invalid arguments for terminal-execute: timeout:",
        ),
    ],
)
async def test_real_tools_bad_arguments(ctx, name, arguments, expected):
    res = await default_registry().execute(call(name, arguments), ctx)
    assert res.is_error
    assert res.content.startswith(expected), res.content


async def test_real_tool_huge_search_not_found_stays_short(ctx, workspace):
    (workspace / "a.txt").write_text("hello\n")
    args = json.dumps({"filePath": "a.txt", "searchContent": "y" * 3_000_000, "replaceContent": "z"})
    res = await default_registry().execute(call("filesystem-edit", args), ctx)
    assert res.is_error and res.content.startswith("Error: searchContent was not found in a.txt.")
    assert len(res.content) < 1000


def test_the_task_tools_come_with_the_first_background_task_once():
    """task-output and task-stop are offered from a session's first background task on, added
    once at the end (the list sent before stays the prefix of the one sent after)."""
    from agent.tools.registry import offer_task_tools

    reg = default_registry()
    before = reg.names
    offer_task_tools(reg)
    assert reg.names == [*before, "task-output", "task-stop"]
    offer_task_tools(reg)
    assert reg.names == [*before, "task-output", "task-stop"]
    assert {"task-output", "task-stop"} <= set(default_registry(every=True).names)  # rules may name them
