"""Where an image cannot be shown it is its `[image: name, WxH]` line: the condense request
(text only), the chat transcript of a loaded session; a restated prompt keeps its images."""

from __future__ import annotations

import json

from agent.context.condense import restated
from agent.runtime.ops import Compact, Prompt
from agent.session.models import Message
from agent.ui.widgets.command_text import shown_user_text
from tests.fakes.llm_server import text
from tests.images.fixtures import png

REF = {"hash": "ab" * 32, "name": "a.png", "mime": "image/png", "width": 3, "height": 2}


async def test_the_summary_request_names_the_image_and_carries_no_bytes(server, open_runtime):
    (open_runtime.workspace / "a.png").write_bytes(png(3, 2))
    server.add(text("It shows a chart."), text("## Summary\nThe user showed a chart."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("what is in @a.png"))
        await runtime.submit(Compact())
    finally:
        await runtime.close()
    summary_request = json.dumps(server.requests[1]["messages"])
    assert "[image: a.png, 3x2]" in summary_request
    assert "data:image" not in summary_request and "image_url" not in summary_request


def test_a_restated_prompt_keeps_its_images():
    prompt = Message(role="user", content="fix what @a.png shows", meta={"images": [REF], "tokens": 1})
    [copy] = restated([prompt])
    assert copy.meta == {"restated_from": prompt.id, "images": [REF]}


def test_the_chat_shows_a_user_message_with_its_image_labels():
    message = Message(role="user", content="see @a.png", meta={"images": [REF]})
    assert shown_user_text(message.content, images=message.meta) == "see @a.png\n[image: a.png, 3x2]"
    assert shown_user_text("plain") == "plain"


def test_the_first_screen_shows_a_resumed_prompt_with_its_image_labels():
    from agent.ui.early_history import history_lines

    lines = history_lines([{"role": "user", "content": "see @a.png", "meta": {"images": [REF]}}], width=80)
    assert any("see @a.png" in line for line in lines)
    assert any("[image: a.png, 3x2]" in line for line in lines)
