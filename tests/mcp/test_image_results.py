"""An MCP tool's image becomes an attachment: the real fake MCP server's `image` tool, driven
through litellm and the fake LLM servers. Checked like a prompt's image, stored as a blob and
named in the tool message's meta; the result keeps its `[image: name, WxH]` line; the next
request of a vision model carries the image in a user message after the tool results (OpenAI
and Anthropic), a model without vision gets the line only."""

from __future__ import annotations

import base64
import json

import mcp_types as types

from agent.images import MAX_IMAGE_BYTES
from agent.mcp.results import MAX_IMAGES_PER_RESULT, read_result
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Export, Prompt
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes import anthropic_server as anthropic
from tests.fakes.llm_server import text, tool_calls
from tests.fakes.mcp_server import PNG_1x1
from tests.images.fixtures import jpeg, png
from tests.mcp.conftest import mcp_flags, of_type, stdio_server

LABEL = "[image: mcp__fake__image-1.png, 1x1]"


def _image_block(data: bytes | str, mime: str = "image/png") -> types.ImageContent:
    encoded = data if isinstance(data, str) else base64.b64encode(data).decode()
    return types.ImageContent(type="image", data=encoded, mime_type=mime)


def _read(*blocks, max_chars: int = 10_000):
    return read_result(types.CallToolResult(content=list(blocks)), max_chars, image_stem="mcp__s__shot")


def _decoded(part: dict) -> tuple[str, bytes]:
    head, _, data = part["image_url"]["url"].partition(",")
    assert head.startswith("data:") and head.endswith(";base64")
    return head[5:-7], base64.b64decode(data)


async def _run_image_tool(open_runtime, model: str, *prompts: str):
    runtime = await open_runtime(flags={"model": model, **mcp_flags({"fake": stdio_server()})})
    await runtime.wait_for_mcp()
    try:
        for prompt in prompts:
            await runtime.submit(Prompt(prompt))
        stored = await runtime.store.all_messages(runtime.session.id)
        tool = next(m for m in stored if m.role == "tool")
        blob = await runtime.store.get_blob(tool.meta["images"][0]["hash"])
    finally:
        await runtime.close()
    return runtime, tool, blob


# -- reading a result ---------------------------------------------------------------------------


def test_an_image_is_checked_named_by_what_it_is_and_labelled_in_place():
    shot, photo = png(4, 3), jpeg(64, 48)
    kept = _read(
        types.TextContent(type="text", text="two shots"), _image_block(shot), _image_block(photo, "image/png")
    )  # the claimed type is not trusted: the bytes say JPEG
    assert kept.text == "two shots\n[image: mcp__s__shot-1.png, 4x3]\n[image: mcp__s__shot-2.jpg, 64x48]"
    assert [(a.ref.name, a.ref.mime, a.data) for a in kept.images] == [
        ("mcp__s__shot-1.png", "image/png", shot),
        ("mcp__s__shot-2.jpg", "image/jpeg", photo),
    ]
    assert kept.meta["images"] == [a.ref.model_dump() for a in kept.images]
    assert kept.meta["mcp_content"] == ["image"]


def test_an_image_that_fails_the_checks_is_one_line_saying_why():
    oversized = "A" * (MAX_IMAGE_BYTES * 4 // 3 + 8)
    kept = _read(
        _image_block(b"not an image at all"),
        _image_block("%%% not base64 %%%"),
        _image_block(oversized),
        _image_block(b"\x89PNG\r\n\x1a\n" + b"\x00" * 4, "x" * 5_000),
    )
    lines = kept.text.split("\n")
    assert lines[0] == "[image: image/png, 19 bytes; not shown: not a PNG, JPEG, GIF or WebP image]"
    assert lines[1].endswith("not shown: not valid base64]")
    assert "over the 5.0 MB limit for an image" in lines[2]
    assert lines[3] == f"[image: {'x' * 100}, 12 bytes; not shown: a PNG without its header]"
    assert kept.images == [] and "images" not in kept.meta


def test_a_result_attaches_a_bounded_number_of_images():
    kept = _read(*[_image_block(png(2, 2, seed=i)) for i in range(MAX_IMAGES_PER_RESULT + 2)])
    assert len(kept.images) == MAX_IMAGES_PER_RESULT
    assert kept.text.count("not shown: more than") == 2


# -- end to end ---------------------------------------------------------------------------------


async def test_a_vision_model_gets_the_image_after_the_tool_results(server, open_runtime):
    server.add(
        tool_calls([("c1", "mcp__fake__image", {}), ("c2", "mcp__fake__echo", {"text": "hi"})]),
        text("a pixel"),
        text("still a pixel"),
    )
    runtime, tool, blob = await _run_image_tool(open_runtime, "openai/gpt-4o", "show me", "and again?")
    assert tool.content == f"a pixel\n{LABEL}"
    assert tool.meta["images"] == [
        {
            "hash": tool.meta["images"][0]["hash"],
            "name": "mcp__fake__image-1.png",
            "mime": "image/png",
            "width": 1,
            "height": 1,
        }
    ]
    assert blob == PNG_1x1  # lossless, in the blob table
    second, third = server.requests[1], server.requests[2]
    roles = [m["role"] for m in second["messages"]]
    assert roles[-5:] == ["user", "assistant", "tool", "tool", "user"]  # after the whole group of results
    assert second["messages"][-3]["content"] == f"a pixel\n{LABEL}"
    carried = second["messages"][-1]["content"]
    assert carried[1]["text"] == f"{LABEL} (tool call c1)"
    assert _decoded(carried[2]) == ("image/png", PNG_1x1)
    assert third["messages"][: len(second["messages"])] == second["messages"]  # a stable prefix
    assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["ok", "ok"]


async def test_a_model_without_vision_gets_the_label_only(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__image", {})]), text("a pixel, I am told"))
    _, tool, blob = await _run_image_tool(open_runtime, "openai/gpt-3.5-turbo", "show me")
    after = server.requests[1]["messages"]
    assert [m["role"] for m in after][-2:] == ["assistant", "tool"]
    assert after[-1]["content"] == f"a pixel\n{LABEL}"
    assert not any(isinstance(m.get("content"), list) for m in after)
    assert blob == PNG_1x1  # kept all the same: a later model with vision sees it


async def test_a_resumed_session_sends_the_tools_image_from_the_store(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__image", {})]), text("a pixel"), text("the same pixel"))
    first = await open_runtime(flags={"model": "openai/gpt-4o", **mcp_flags({"fake": stdio_server()})})
    await first.wait_for_mcp()
    try:
        await first.submit(Prompt("show me"))
        session_id = first.session.id
    finally:
        await first.close()
    resumed = await open_runtime(flags={"model": "openai/gpt-4o"}, resume_id=session_id)
    try:
        await resumed.submit(Prompt("again"))
    finally:
        await resumed.close()
    messages = server.requests[2]["messages"]
    tool_at = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assert _decoded(messages[tool_at + 1]["content"][2]) == ("image/png", PNG_1x1)


async def test_the_image_reaches_anthropic_after_the_tool_result(anthropic_server, workspace):
    anthropic_server.add(
        anthropic.tool_use([("toolu_1", "mcp__fake__image", {})]), anthropic.text("A pixel."), anthropic.text("Yes.")
    )
    flags = {
        "model": "anthropic/claude-sonnet-4-5",
        "api_base": anthropic_server.base_url,
        "api_key": "sk-ant-test",
        "yolo": True,
        **mcp_flags({"fake": stdio_server()}),
    }
    runtime = await Runtime.open(load_settings(workspace, flags=flags), FrontEnd(on_event=lambda event: None))
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("show me"))
        await runtime.submit(Prompt("sure?"))
    finally:
        await runtime.close()
    assert anthropic_server.rejections == []
    for body in anthropic_server.requests[1:]:
        messages = body["messages"]
        at = next(i for i, m in enumerate(messages) if any(b.get("type") == "tool_use" for b in m["content"]))
        answer = messages[at + 1]
        assert answer["role"] == "user"
        kinds = [b["type"] for b in answer["content"]]
        assert kinds[0] == "tool_result" and "image" in kinds  # the result first, then the image
        result = answer["content"][0]
        assert result["tool_use_id"] == "toolu_1" and LABEL in str(result["content"])
        image = next(b for b in answer["content"] if b["type"] == "image")
        assert image["source"]["media_type"] == "image/png"
        assert base64.b64decode(image["source"]["data"]) == PNG_1x1


async def test_an_export_carries_the_tools_image(server, open_runtime):
    server.add(tool_calls([("c1", "mcp__fake__image", {})]), text("a pixel"))
    runtime = await open_runtime(flags={"model": "openai/gpt-4o", **mcp_flags({"fake": stdio_server()})})
    await runtime.wait_for_mcp()
    try:
        await runtime.submit(Prompt("show me"))
        target = await runtime.submit(Export("jsonl"))
    finally:
        await runtime.close()
    records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    images = [r for r in records if r["type"] == "image"]
    assert [(r["mime"], base64.b64decode(r["content"])) for r in images] == [("image/png", PNG_1x1)]
