"""A prompt's image reaches the model through litellm, against the loopback fake servers:
OpenAI content parts with a data URL, Anthropic image blocks; stored once, sent again on
later turns and after a resume; a model without vision gets the text and a notice."""

from __future__ import annotations

import base64

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt, SetModel
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from agent.turn.events import Notice
from tests.fakes import anthropic_server as anthropic
from tests.fakes.llm_server import text
from tests.images.fixtures import jpeg, png


def _image_urls(message: dict) -> list[str]:
    content = message["content"]
    if not isinstance(content, list):
        return []
    return [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]


def _decoded(url: str) -> tuple[str, bytes]:
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64")
    return head[5:-7], base64.b64decode(data)


def _notices(runtime) -> list[str]:
    return [e.message for e in runtime.events if isinstance(e, Notice)]


async def test_at_path_attaches_the_image_to_the_request_and_keeps_it(server, open_runtime):
    shot = png(4, 3)
    (open_runtime.workspace / "shots").mkdir()
    (open_runtime.workspace / "shots" / "login.png").write_bytes(shot)
    server.add(text("A login form."), text("Still a login form."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("What is in @shots/login.png?"))
        await runtime.submit(Prompt("And now?"))
        stored = await runtime.store.all_messages(runtime.session.id)
        blob = await runtime.store.get_blob(stored[0].meta["images"][0]["hash"])
    finally:
        await runtime.close()
    first, second = server.requests
    user = first["messages"][-1]
    assert user["content"][0] == {"type": "text", "text": "What is in @shots/login.png?"}
    [url] = _image_urls(user)
    assert _decoded(url) == ("image/png", shot)
    # The next turn's request carries the same image in the same place (a stable prefix).
    assert second["messages"][1] == user
    assert stored[0].content == "What is in @shots/login.png?"  # the text stays the user's text
    assert stored[0].meta["images"] == [
        {"hash": stored[0].meta["images"][0]["hash"], "name": "login.png", "mime": "image/png", "width": 4, "height": 3}
    ]
    assert blob == shot  # lossless, in the blob table
    assert "[image: login.png, 4x3] attached" in _notices(runtime)


async def test_a_pasted_absolute_path_with_escaped_spaces_attaches_a_jpeg(server, open_runtime, tmp_path):
    photo = jpeg(640, 480)
    folder = tmp_path / "My Pictures"
    folder.mkdir()
    (folder / "cat photo.jpg").write_bytes(photo)
    pasted = str(folder / "cat photo.jpg").replace(" ", "\\ ")
    server.add(text("A cat."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(f"describe {pasted}"))
    finally:
        await runtime.close()
    [url] = _image_urls(server.requests[0]["messages"][-1])
    assert _decoded(url) == ("image/jpeg", photo)


async def test_a_resumed_session_sends_the_image_from_the_store(server, open_runtime):
    shot = png(2, 2, seed=5)
    (open_runtime.workspace / "a.png").write_bytes(shot)
    server.add(text("first"), text("second"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("look at @a.png"))
        session_id = runtime.session.id
    finally:
        await runtime.close()
    (open_runtime.workspace / "a.png").unlink()  # the request must not need the file any more
    resumed = await open_runtime(resume_id=session_id)
    try:
        await resumed.submit(Prompt("again"))
    finally:
        await resumed.close()
    [url] = _image_urls(server.requests[1]["messages"][1])
    assert _decoded(url) == ("image/png", shot)


async def test_a_model_without_vision_gets_the_text_and_the_user_a_notice(server, open_runtime):
    (open_runtime.workspace / "a.png").write_bytes(png())
    server.add(text("ok"))
    runtime = await open_runtime(flags={"model": "openai/gpt-3.5-turbo"})
    try:
        await runtime.submit(Prompt("see @a.png"))
        stored = await runtime.store.all_messages(runtime.session.id)
    finally:
        await runtime.close()
    assert server.requests[0]["messages"][-1]["content"] == "see @a.png"
    assert "images" not in stored[0].meta
    assert any("does not take images" in n and "a.png" in n for n in _notices(runtime))


async def test_switching_to_a_model_without_vision_sends_the_label_instead(server, open_runtime):
    (open_runtime.workspace / "a.png").write_bytes(png(3, 2))
    server.add(text("seen"), text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("see @a.png"))
        runtime.submit(SetModel("openai/gpt-3.5-turbo"))
        await runtime.submit(Prompt("go on"))
    finally:
        await runtime.close()
    assert server.requests[1]["messages"][1]["content"] == "see @a.png\n[image: a.png, 3x2]"


async def test_a_named_file_that_is_not_an_image_is_refused_with_a_notice(server, open_runtime):
    (open_runtime.workspace / "fake.png").write_text("not an image at all")
    server.add(text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("see @fake.png and @missing.png"))
    finally:
        await runtime.close()
    assert server.requests[0]["messages"][-1]["content"] == "see @fake.png and @missing.png"
    notices = _notices(runtime)
    assert any(n.startswith("fake.png: not a PNG, JPEG, GIF or WebP image") for n in notices)
    assert any(n.startswith("missing.png: no such file") for n in notices)


async def test_the_image_reaches_anthropic_as_an_image_block(anthropic_server, workspace):
    shot = png(5, 4, seed=9)
    (workspace / "ui.png").write_bytes(shot)
    anthropic_server.add(anthropic.text("A button."), anthropic.text("Yes."))
    settings = load_settings(
        workspace,
        flags={
            "model": "anthropic/claude-sonnet-4-5",
            "api_base": anthropic_server.base_url,
            "api_key": "sk-ant-test",
            "yolo": True,
        },
    )
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda event: None))
    try:
        await runtime.submit(Prompt("what is @ui.png"))
        await runtime.submit(Prompt("sure?"))
    finally:
        await runtime.close()
    assert anthropic_server.rejections == []
    for body in anthropic_server.requests:
        blocks = body["messages"][0]["content"]
        assert blocks[0]["type"] == "text" and blocks[0]["text"] == "what is @ui.png"
        image = next(b for b in blocks if b["type"] == "image")
        assert image["source"]["type"] == "base64" and image["source"]["media_type"] == "image/png"
        assert base64.b64decode(image["source"]["data"]) == shot


async def test_a_session_of_large_screenshots_keeps_working_past_twenty(anthropic_server, workspace):
    """Anthropic refuses a request of more than 20 images with a side over 2,000 pixels (the
    fake checks it as the API does): without the image window, turn 21 and every later one
    would fail. With it, each request carries at most 20, the newest."""
    turns = 22
    for i in range(turns):
        (workspace / f"shot{i}.png").write_bytes(png(2100, 2, seed=i))
        anthropic_server.add(anthropic.text(f"Seen {i}."))
    settings = load_settings(
        workspace,
        flags={
            "model": "anthropic/claude-sonnet-4-5",
            "api_base": anthropic_server.base_url,
            "api_key": "sk-ant-test",
            "yolo": True,
        },
    )
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda event: None))
    try:
        for i in range(turns):
            await runtime.submit(Prompt(f"and @shot{i}.png"))
    finally:
        await runtime.close()
    assert anthropic_server.rejections == []
    counts = [
        sum(
            1
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "image"
        )
        for body in anthropic_server.requests
    ]
    assert counts == list(range(1, 21)) + [10, 11]
    last = anthropic_server.requests[-1]["messages"][0]["content"]
    text = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last)
    assert "[image: shot0.png, 2100x2]" in text  # the oldest is its label
