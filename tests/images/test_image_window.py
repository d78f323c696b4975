"""A request carries at most 20 images and 20 MB of them, the newest (agent/context/image_window.py):
a session of screenshots must not fail every turn at the provider's limits. The window moves
in steps of half the budget, so the cached prefix is rewritten rarely, and the token count
follows what is sent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.context.builder import RequestBuilder
from agent.context.image_window import MAX_IMAGE_BYTES_PER_REQUEST, MAX_IMAGES_PER_REQUEST, window_start
from agent.context.tokens import TokenCounter
from agent.images import image_tokens
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings
from tests.images.fixtures import png

MB = 1024 * 1024
SETTINGS = Settings(workspace="/ws")


def test_twenty_images_all_go_the_twenty_first_drops_the_oldest_half():
    assert window_start([100_000] * 20) == 0
    assert window_start([100_000] * 21) == 11  # ten newest kept, then room for ten more
    assert window_start([100_000] * 31) == 11  # twenty again
    assert window_start([100_000] * 32) == 22


def test_bytes_count_too():
    assert window_start([5 * MB] * 4) == 0  # 20 MB exactly
    assert window_start([5 * MB] * 5) == 3  # 25 MB: down to 10 MB, the two newest


@given(st.lists(st.integers(1, 5 * MB), max_size=120))
def test_window_fits_keeps_the_newest_and_only_moves_forward(sizes):
    starts = [window_start(sizes[:n]) for n in range(len(sizes) + 1)]
    assert starts == sorted(starts)  # appending never brings an image back (prefix stable)
    for n, start in enumerate(starts):
        held = sizes[start:n]
        assert len(held) <= MAX_IMAGES_PER_REQUEST and sum(held) <= MAX_IMAGE_BYTES_PER_REQUEST
        assert n == 0 or start < n  # the newest image is always sent
    moves = sum(1 for a, b in zip(starts, starts[1:], strict=False) if a != b)
    assert moves <= len(sizes) // (MAX_IMAGES_PER_REQUEST // 2) + sum(
        s > MAX_IMAGE_BYTES_PER_REQUEST // 8 for s in sizes
    )


def _prompts(n: int) -> list[Message]:
    history = []
    for i in range(n):
        ref = {"hash": f"h{i}", "name": f"shot{i}.png", "mime": "image/png", "width": 30, "height": 20}
        history += [
            Message(role="user", content=f"look {i}", meta={"images": [ref]}),
            Message(role="assistant", content=f"seen {i}"),
        ]
    return history + [Message(role="user", content="and now?")]


def _builder(n: int) -> RequestBuilder:
    builder = RequestBuilder(SETTINGS, "gpt-4o")
    for i in range(n):
        builder.images.add(f"h{i}", png(30, 20, seed=i))
    return builder


def _images_in(messages: list[dict]) -> list[str]:
    return [
        part["image_url"]["url"]
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]


def test_the_request_carries_the_newest_twenty_and_labels_the_rest():
    builder = _builder(25)
    built = builder.build(_prompts(25), now_ms=1_000, tools=None, system_prompt="sys")
    assert len(_images_in(built.messages)) == 25 - 11
    first = built.messages[1]
    assert first == {"role": "user", "content": "look 0\n[image: shot0.png, 30x20]"}
    assert isinstance(built.messages[2 * 11 + 1]["content"], list)  # shot11 is the oldest sent
    counter = TokenCounter()
    expected = counter.count_messages(built.messages[1:]) + 14 * image_tokens(30, 20)
    assert built.tokens.messages == expected  # the labels are counted, not the images they replace
    fresh = _builder(25).build(_prompts(25), now_ms=1_000, tools=None, system_prompt="sys")
    assert fresh.messages == built.messages and fresh.tokens == built.tokens  # warm == fresh


def test_under_the_limit_each_request_starts_with_the_last_one():
    builder = _builder(20)
    history = _prompts(20)
    last = None
    for n in range(1, 21):
        sent = builder.build(history[: 2 * n], now_ms=1_000, tools=None, system_prompt="sys").messages
        if last is not None:
            assert sent[: len(last)] == last
        last = sent


def test_tool_result_images_share_the_window():
    builder = RequestBuilder(SETTINGS, "gpt-4o")
    history = [Message(role="user", content="shots")]
    for i in range(21):
        builder.images.add(f"t{i}", png(8, 6, seed=i))
        ref = {"hash": f"t{i}", "name": f"shot-{i}.png", "mime": "image/png", "width": 8, "height": 6}
        history += [
            Message(
                role="assistant", content="", tool_calls=[ToolCall(id=f"c{i}", name="mcp__s__shot", arguments="{}")]
            ),
            Message(
                role="tool",
                tool_call_id=f"c{i}",
                tool_name="mcp__s__shot",
                content=f"[image: shot-{i}.png, 8x6]",
                meta={"images": [ref]},
            ),
        ]
    history.append(Message(role="assistant", content="done"))
    history.append(Message(role="user", content="next"))
    built = builder.build(history, now_ms=1_000, tools=None, system_prompt="sys")
    assert len(_images_in(built.messages)) == 10
