"""Pipeline invariants over generated histories, checked through litellm's own request
transformations for an OpenAI and an Anthropic model."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.pipeline import build_api_messages
from agent.llm.offline import import_litellm
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings
from tests.context.test_orphans import assert_valid

BASE_MS = 1_769_800_000_000
SETTINGS = Settings()
PLACEHOLDERS = {SETTINGS.context.terminal_outdated_placeholder, SETTINGS.context.file_read_placeholder}
TOOLS = [
    {
        "type": "function",
        "function": {"name": n, "description": "d", "parameters": {"type": "object", "properties": {}}},
    }
    for n in ("filesystem-read", "terminal-execute", "filesystem-edit")
]


@st.composite
def histories(draw):
    """User turns, tool calls of several kinds, errors, missing/duplicated results, interruptions."""
    out: list[Message] = []
    n_calls = 0
    for _ in range(draw(st.integers(0, 14))):
        t = BASE_MS + draw(st.integers(0, 3_600_000))
        kind = draw(st.sampled_from(["user", "text", "calls", "calls", "calls", "interrupted", "stray"]))
        if kind == "user":
            out.append(Message(role="user", content=draw(st.text(max_size=8)), created_at=t))
        elif kind == "text":
            out.append(Message(role="assistant", content=draw(st.text(min_size=1, max_size=8)), created_at=t))
        elif kind == "interrupted":
            out.append(
                Message(
                    role="assistant",
                    content=draw(st.sampled_from([None, "", "part"])),
                    status="interrupted",
                    created_at=t,
                )
            )
        elif kind == "stray":
            out.append(Message(role="tool", tool_call_id=f"stray{n_calls}", content="orphan", created_at=t))
        else:
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n_calls += 1
                name = draw(st.sampled_from(["filesystem-read", "terminal-execute", "filesystem-edit"]))
                if name == "filesystem-read":
                    args = json.dumps({"filePath": draw(st.sampled_from(["a.py", "./a.py", "b.py", ["a.py", "b.py"]]))})
                else:
                    args = json.dumps({"command": "make"})
                calls.append(ToolCall(id=f"c{n_calls}", name=name, arguments=args))
            out.append(
                Message(
                    role="assistant", content=draw(st.one_of(st.none(), st.just("ok"))), tool_calls=calls, created_at=t
                )
            )
            for call in calls:
                fate = draw(st.sampled_from(["ok", "ok", "ok", "error", "missing", "twice"]))
                if fate == "missing":
                    continue
                if call.name == "terminal-execute":
                    body = {
                        "command": "make",
                        "stdout": "built",
                        "stderr": "boom" if fate == "error" else "",
                        "exitCode": 1 if fate == "error" else 0,
                    }
                    content = json.dumps(body)
                else:
                    content = "Error: no such file" if fate == "error" else "📄 a.py (lines 1-1/1)\n1→x"
                result = Message(
                    role="tool",
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=content,
                    status="error" if fate == "error" else "ok",
                    created_at=t + draw(st.integers(0, 1000)),
                )
                out.append(result)
                if fate == "twice":
                    out.append(result.model_copy(update={"id": result.id + "-dup"}))
    return out


def assert_anthropic_valid(request: dict) -> None:
    """Anthropic's rule: each tool_result answers a tool_use of the assistant turn just before."""
    msgs = request["messages"]
    for i, m in enumerate(msgs):
        blocks = m["content"] if isinstance(m["content"], list) else []
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if results:
            prev = msgs[i - 1] if i else {"content": []}
            prev_uses = [
                b["id"] for b in prev["content"] if isinstance(prev["content"], list) and b.get("type") == "tool_use"
            ]
            assert set(results) <= set(prev_uses), "tool_result without the tool_use right before it"
        if uses:
            nxt = msgs[i + 1]["content"] if i + 1 < len(msgs) else []
            answered = [b.get("tool_use_id") for b in nxt if isinstance(b, dict) and b.get("type") == "tool_result"]
            assert set(uses) <= set(answered), "tool_use without its tool_result right after it"


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 7_200_000))
def test_build_is_pure_valid_and_accepted_by_litellm(history, offset):
    import_litellm()
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

    now = BASE_MS + offset
    before = copy.deepcopy([m.model_dump() for m in history])
    first = build_api_messages(history, now_ms=now, settings=SETTINGS, tools=TOOLS, system_prompt="sys")
    second = build_api_messages(history, now_ms=now, settings=SETTINGS, tools=TOOLS, system_prompt="sys")
    assert [m.model_dump() for m in history] == before
    assert first.messages == second.messages
    assert_valid(first.messages[1:])

    # Placeholders only ever replace successful results.
    by_call = {m.tool_call_id: m for m in history if m.role == "tool"}
    for sent in first.messages:
        if sent["role"] == "tool" and sent["content"] in PLACEHOLDERS:
            source = by_call[sent["tool_call_id"]]
            assert source.status == "ok" and not source.content.startswith("Error:")

    OpenAIGPTConfig().transform_request("gpt-4o", copy.deepcopy(first.messages), {"tools": TOOLS}, {}, {})
    if len(first.messages) > 1:
        request = AnthropicConfig().transform_request(
            "claude-sonnet-4-5", copy.deepcopy(first.messages), {"tools": TOOLS, "max_tokens": 1024}, {}, {}
        )
        assert_anthropic_valid(request)


@hsettings(max_examples=300, deadline=None)
@given(histories())
def test_orphans_fast_path_agrees_with_the_general_repair(history):
    from agent.context.passes import orphans

    fast, changed = orphans.apply(history)
    slow, slow_changed = orphans.repair(history)
    assert [m.model_dump() for m in fast] == [m.model_dump() for m in slow]
    assert changed == slow_changed


@hsettings(max_examples=100, deadline=None)
@given(histories(), st.integers(0, 7_200_000))
def test_a_rebuild_after_editing_a_message_sees_the_edit(history, offset):
    """Counts and API forms are remembered per message object; replacing a field must show."""
    first = build_api_messages(history, now_ms=BASE_MS + offset, settings=SETTINGS)
    for message in history:
        if message.role == "assistant" and not message.tool_calls:
            message.content = (message.content or "") + " and more words"
            message.status = "interrupted"
    again = build_api_messages(history, now_ms=BASE_MS + offset, settings=SETTINGS)
    fresh = build_api_messages([m.model_copy() for m in history], now_ms=BASE_MS + offset, settings=SETTINGS)
    assert again.messages == fresh.messages
    assert again.tokens == fresh.tokens
    if any(m.role == "assistant" and not m.tool_calls for m in history):
        assert again.messages != first.messages or again.tokens != first.tokens
