"""Tool results' images in the build: a user message after the group of results they belong
to, for a model that sees images; the label only otherwise. Pure (history untouched, each
request its own parts), the same from a warm and a fresh builder, counted by the estimate."""

from __future__ import annotations

import copy

from agent.context.builder import RequestBuilder
from agent.context.rendered import TOOL_IMAGES_INTRO
from agent.images import image_tokens
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings
from tests.images.fixtures import png

SHOT = png(30, 20)
OTHER = png(8, 6, seed=3)
REF = {"hash": "h1", "name": "mcp__s__shot-1.png", "mime": "image/png", "width": 30, "height": 20}
REF2 = {"hash": "h2", "name": "mcp__s__shot-1.png", "mime": "image/png", "width": 8, "height": 6}
SETTINGS = Settings(workspace="/ws")


def _calls(*ids: str) -> Message:
    return Message(
        role="assistant", content="", tool_calls=[ToolCall(id=i, name="mcp__s__shot", arguments="{}") for i in ids]
    )


def _result(call_id: str, *refs: dict) -> Message:
    labels = "\n".join(f"[image: {r['name']}, {r['width']}x{r['height']}]" for r in refs)
    return Message(
        role="tool",
        tool_call_id=call_id,
        tool_name="mcp__s__shot",
        content=f"shot\n{labels}".strip(),
        meta={"images": list(refs)} if refs else {},
    )


def _history() -> list[Message]:
    return [
        Message(role="user", content="take shots"),
        _calls("c1", "c2", "c3"),
        _result("c1", REF),
        _result("c2"),
        _result("c3", REF2),
        Message(role="assistant", content="two shots"),
        Message(role="user", content="and?"),
    ]


def _builder(model: str = "gpt-4o", *, blobs: bool = True) -> RequestBuilder:
    builder = RequestBuilder(SETTINGS, model)
    if blobs:
        builder.images.add("h1", SHOT)
        builder.images.add("h2", OTHER)
    return builder


def _build(builder: RequestBuilder, history: list[Message]):
    return builder.build(history, now_ms=1_000, tools=None, system_prompt="sys")


def test_the_images_follow_the_group_of_results_in_one_user_message():
    messages = _build(_builder(), _history()).messages
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "user",
        "assistant",
        "user",
    ]
    assert messages[3]["content"] == "shot\n[image: mcp__s__shot-1.png, 30x20]"  # the result keeps its label
    carried = messages[6]["content"]
    assert carried[0] == {"type": "text", "text": TOOL_IMAGES_INTRO}
    assert carried[1] == {"type": "text", "text": "[image: mcp__s__shot-1.png, 30x20] (tool call c1)"}
    assert carried[2]["image_url"]["url"].startswith("data:image/png;base64,")
    assert carried[3]["text"] == "[image: mcp__s__shot-1.png, 8x6] (tool call c3)"
    assert len(carried) == 5


def test_a_model_without_vision_gets_the_results_text_only():
    messages = _build(_builder("openai/gpt-3.5-turbo"), _history()).messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "tool", "assistant", "user"]
    assert messages[3]["content"] == "shot\n[image: mcp__s__shot-1.png, 30x20]"


def test_missing_bytes_leave_the_label_and_bytes_arriving_later_are_sent():
    builder = _builder(blobs=False)
    history = _history()
    assert len(_build(builder, history).messages) == 8  # no bytes: no image message
    builder.images.add("h2", OTHER)
    carried = _build(builder, history).messages[6]["content"]
    assert [p["type"] for p in carried] == ["text", "text", "image_url"]


def test_pure_warm_equals_fresh_and_each_request_owns_its_parts():
    history = _history()
    before = copy.deepcopy([m.model_dump() for m in history])
    builder = _builder()
    first = _build(builder, history).messages
    first[6]["content"][2]["image_url"]["url"] = "edited by an adapter"
    first[6]["content"].append({"type": "text", "text": "appended"})
    again = _build(builder, history).messages
    assert again == _build(_builder(), history).messages
    assert len(again[6]["content"]) == 5 and again[6]["content"][2]["image_url"]["url"] != "edited by an adapter"
    assert [m.model_dump() for m in history] == before


def test_a_longer_history_reuses_the_last_request_and_matches_a_fresh_build():
    """The loop's next request is the last one plus a few messages, even in the middle of a group."""
    history = _history()
    builder = _builder()
    for stop in range(1, len(history) + 1):  # one message at a time, as a warm builder sees them
        warm = _build(builder, history[:stop])
        fresh = _build(_builder(), history[:stop])
        assert warm.messages == fresh.messages and warm.tokens == fresh.tokens, stop


def test_the_images_are_counted_by_the_estimate():
    history = _history()
    with_images = _build(_builder(), history).tokens.messages
    without = _build(_builder("openai/gpt-3.5-turbo"), history).tokens.messages
    assert with_images - without > image_tokens(30, 20) + image_tokens(8, 6)
