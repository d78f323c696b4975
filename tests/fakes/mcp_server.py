"""A real MCP server for tests, written with the `mcp` package's own low-level server API.

Run over stdio (`python -m tests.fakes.mcp_server`) or streamable HTTP (`--http`: it binds
a loopback port, prints `listening <url>` on stdout once the socket listens, then serves).
The tools cover what a client must survive: an echo, a call that kills the server mid-call
(`crash`), one that never answers (`hang`), a 10 MB answer (`big`), an image, an `isError`
result, a tool whose name, description and schema are hostile (`--hostile`), and N
generated tools with realistic schemas (`--many N`, for the catalog figure).

`--require-header NAME=VALUE` (HTTP) answers 401 to requests without that header, so a test
can show configured headers reach the server. `--calls FILE` appends one line per call
(tool name), so a test can see a call arrived before the server died.

`--extras` makes it a server the way the reference "everything" server is: `instructions` in
its initialize result, a prompt (`review`, two arguments), a tool asking the client for its
roots (`roots`, `roots/list`) and one asking the user through a form (`ask`, elicitation).
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

BIG_RESULT_BYTES = 10 * 1024 * 1024
# A 1x1 transparent PNG.
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

BASE_TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back. Useful for tests.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "crash",
        "description": "Kill the server in the middle of the call.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "big",
        "description": "Answer with a very large text.",
        "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}},
    },
    {
        "name": "image",
        "description": "Answer with a small PNG image and a caption.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "fail",
        "description": "Answer with an isError result.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def hostile_tools() -> list[dict[str, Any]]:
    """Names a provider refuses, a megabyte description, a schema nested 60 deep and one of
    several megabytes (a non-object schema cannot be sent: the SDK refuses it)."""
    nested: dict[str, Any] = {"type": "string"}
    for _ in range(60):
        nested = {"type": "object", "properties": {"x": nested}}
    wide = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "d" * 200} for i in range(20_000)},
    }
    return [
        {
            "name": "bad name/with spaces;and:punctuation" + "x" * 200,
            "description": "D" * 1_000_000,
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
        {
            "name": "deep",
            "description": "Nested very deep.",
            "inputSchema": {"type": "object", "properties": {"a": nested}},
        },
        {"name": "wide", "description": "Megabytes of schema.", "inputSchema": wide},
    ]


def many_tools(count: int) -> list[dict[str, Any]]:
    """`count` tools shaped like a real SaaS server's (an issue tracker): a paragraph of
    description and half a dozen typed, described parameters each."""
    verbs = ["list", "get", "create", "update", "delete", "search", "archive", "assign", "comment", "link"]
    things = ["issue", "project", "milestone", "label", "user", "team", "board", "sprint", "release"]
    tools = []
    for i in range(count):
        verb, thing = verbs[i % len(verbs)], things[(i // len(verbs)) % len(things)]
        name = f"{verb}_{thing}" + (f"_{i // (len(verbs) * len(things))}" if i >= len(verbs) * len(things) else "")
        tools.append(
            {
                "name": name,
                "description": (
                    f"{verb.capitalize()} a {thing} in the tracker. Use this when the user asks to "
                    f"{verb} one or more {thing}s; results are paginated and sorted by last update. "
                    f"Fields not given keep their current values. Requires the tracker:{thing} scope."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "workspace_id": {"type": "string", "description": "The workspace that owns the item."},
                        f"{thing}_id": {"type": "string", "description": f"The {thing}'s identifier, e.g. ABC-123."},
                        "query": {"type": "string", "description": "Free-text filter applied to titles and bodies."},
                        "state": {
                            "type": "string",
                            "enum": ["open", "in_progress", "closed", "all"],
                            "description": "Only items in this state.",
                        },
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Page size."},
                        "cursor": {"type": "string", "description": "Where the previous page ended."},
                        "fields": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Which fields to return; all when omitted.",
                        },
                    },
                    "required": ["workspace_id"],
                },
            }
        )
    return tools


EXTRA_TOOLS: list[dict[str, Any]] = [
    {
        "name": "roots",
        "description": "List the client's roots.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "ask",
        "description": "Ask the user for their name through a form.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
INSTRUCTIONS = "Always call roots before touching files. Dates are UTC."
REVIEW_PROMPT = types.Prompt(
    name="review",
    description="Review a file for one concern",
    arguments=[
        types.PromptArgument(name="path", description="the file", required=True),
        types.PromptArgument(name="focus", description="what to look for"),
    ],
)


async def extra_call(ctx: Any, params: types.CallToolRequestParams) -> Any:
    """The `--extras` tools: what the client answered to the server's own request, asked the
    2026-07-28 way (an `InputRequiredResult` the client fulfils and retries with)."""
    name, answers = params.name, params.input_responses or {}
    if name == "roots":
        listed = answers.get("roots")
        if listed is None:
            return types.InputRequiredResult(input_requests={"roots": types.ListRootsRequest()}, request_state="r")
        text = "roots: " + ", ".join(f"{r.uri} ({r.name})" for r in getattr(listed, "roots", []))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
    if name == "ask":
        answer = answers.get("ask")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}}
            form = types.ElicitRequestFormParams(message="Who are you?", requested_schema=schema)
            return types.InputRequiredResult(
                input_requests={"ask": types.ElicitRequest(params=form)}, request_state="a"
            )
        reason = (getattr(answer, "meta", None) or {}).get("reason", "")
        text = f"elicitation: {answer.action} {answer.content or {}} {reason}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text.strip())])
    return None


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[REVIEW_PROMPT])


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    args = params.arguments or {}
    text = f"Review {args.get('path', '?')} for {args.get('focus') or 'anything'}."
    return types.GetPromptResult(
        description="review",
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text)),
            types.PromptMessage(role="user", content=types.TextContent(type="text", text="Be brief.")),
        ],
    )


def build_server(tools: list[dict[str, Any]], calls_file: str | None, extras: bool = False) -> Server:
    listed = [types.Tool.model_validate(t) for t in tools]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, args = params.name, params.arguments or {}
        if calls_file:
            with open(calls_file, "a", encoding="utf-8") as f:
                f.write(name + "\n")
        extra = await extra_call(ctx, params) if extras else None
        if extra is not None:
            return extra
        if name == "echo":
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"echo: {args.get('text', '')}")])
        if name == "crash":
            os._exit(3)
        if name == "hang":
            await anyio.sleep_forever()
        if name == "big":
            size = int(args.get("size") or BIG_RESULT_BYTES)
            return types.CallToolResult(content=[types.TextContent(type="text", text="x" * size)])
        if name == "image":
            data = base64.b64encode(PNG_1x1).decode()
            return types.CallToolResult(
                content=[
                    types.TextContent(type="text", text="a pixel"),
                    types.ImageContent(type="image", data=data, mime_type="image/png"),
                ]
            )
        if name == "fail":
            return types.CallToolResult(content=[types.TextContent(type="text", text="it went wrong")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{name} called with {sorted(args)}")])

    if extras:
        return Server(
            "cairn-fake",
            version="1.0",
            instructions=INSTRUCTIONS,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
        )
    return Server("cairn-fake", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(server: Server, required: tuple[str, str] | None) -> None:
    import uvicorn

    app = server.streamable_http_app()
    if required is not None:
        inner, (header, value) = app, required

        async def app(scope, receive, send):  # noqa: F811 - the guarded app replaces the plain one
            if scope["type"] == "http":
                headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
                if headers.get(header.lower()) != value:
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"unauthorized"})
                    return
            await inner(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"listening http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--many", type=int, default=0, help="only N generated tools")
    parser.add_argument("--hostile", action="store_true", help="add the hostile tools")
    parser.add_argument("--require-header", default=None)
    parser.add_argument("--calls", default=None)
    parser.add_argument("--extras", action="store_true", help="instructions, a prompt, roots and elicitation")
    parser.add_argument("--exit-at-start", action="store_true", help="die before answering anything")
    args = parser.parse_args(argv)
    if args.exit_at_start:
        print("fake server: refusing to start", file=sys.stderr)
        sys.exit(2)
    tools = many_tools(args.many) if args.many else list(BASE_TOOLS)
    if args.hostile:
        tools += hostile_tools()
    if args.extras:
        tools += EXTRA_TOOLS
    server = build_server(tools, args.calls, args.extras)
    if args.http:
        required = tuple(args.require_header.split("=", 1)) if args.require_header else None
        serve_http(server, required)  # type: ignore[arg-type]
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
