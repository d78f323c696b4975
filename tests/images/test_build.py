"""The build with images: pure (history untouched, each request its own content parts), the
same from a fresh builder state, and counted with the documented image estimate."""

from __future__ import annotations

import copy

from agent.context.builder import RequestBuilder
from agent.images import image_tokens
from agent.session.models import Message
from agent.settings.schema import Settings
from tests.images.fixtures import png

DATA = png(30, 20)
REF = {"hash": "h1", "name": "a.png", "mime": "image/png", "width": 30, "height": 20}
SETTINGS = Settings(workspace="/ws")


def _history() -> list[Message]:
    return [
        Message(role="user", content="look @a.png", meta={"images": [REF]}),
        Message(role="assistant", content="a chart"),
        Message(role="user", content="more?"),
    ]


def _builder(model: str = "gpt-4o") -> RequestBuilder:
    builder = RequestBuilder(SETTINGS, model)
    builder.images.add("h1", DATA)
    return builder


def _build(builder: RequestBuilder, history: list[Message]):
    return builder.build(history, now_ms=1_000, tools=None, system_prompt="sys")


def test_history_untouched_and_each_request_owns_its_parts():
    history = _history()
    before = copy.deepcopy([m.model_dump() for m in history])
    builder = _builder()
    first = _build(builder, history).messages
    assert first[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    first[1]["content"][1]["image_url"]["url"] = "edited by an adapter"
    first[1]["content"].append({"type": "text", "text": "appended"})
    again = _build(builder, history).messages
    assert again == _build(_builder(), history).messages  # warm == fresh state
    assert len(again[1]["content"]) == 2 and again[1]["content"][1]["image_url"]["url"] != "edited by an adapter"
    assert [m.model_dump() for m in history] == before


def test_the_image_is_counted_by_the_estimate():
    history = _history()
    with_image = _build(_builder(), history).tokens.messages
    plain = [m.model_copy(update={"meta": {}}) for m in history]
    without = _build(_builder(), plain).tokens.messages
    assert with_image - without == image_tokens(30, 20)


def test_bytes_arriving_later_are_not_hidden_by_a_remembered_request():
    builder = RequestBuilder(SETTINGS, "gpt-4o")
    history = _history()
    assert _build(builder, history).messages[1]["content"] == "look @a.png\n[image: a.png, 30x20]"
    builder.images.add("h1", DATA)
    assert _build(builder, history).messages[1]["content"][1]["type"] == "image_url"


def test_a_model_without_vision_gets_the_label():
    messages = _build(_builder("openai/gpt-3.5-turbo"), _history()).messages
    assert messages[1]["content"] == "look @a.png\n[image: a.png, 30x20]"
