"""Issue 28: whatever the passes and the budget's truncation do to a request, a tool call's
thinking stays with it, byte for byte (Anthropic refuses a tool loop whose signed thinking
was changed or separated from its tool_use blocks; litellm sends an assistant message's
`thinking_blocks` first, directly before its tool calls)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from agent.context.cache_policy import EXACT, CachePolicy
from agent.context.pipeline import TruncateTo, build_api_messages
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings

BASE_MS = 1_769_800_000_000
SETTINGS = Settings.model_validate({"workspace": "/w", "context": {"max_inline_chars": 400}})


@st.composite
def histories(draw) -> list[Message]:
    out: list[Message] = []
    t = BASE_MS
    n = 0
    for _ in range(draw(st.integers(1, 14))):
        t += draw(st.integers(1_000, 20 * 60 * 1000))
        out.append(Message(role="user", content="do it " * draw(st.integers(1, 30)), created_at=t))
        for _ in range(draw(st.integers(0, 3))):
            n += 1
            tool = draw(st.sampled_from(["filesystem-read", "terminal-execute", "filesystem-edit"]))
            args = {"filePath": f"f{draw(st.integers(0, 2))}.py"} if tool != "terminal-execute" else {"command": "ls"}
            blocks = [{"type": "thinking", "thinking": draw(st.text(min_size=1, max_size=60)), "signature": f"sig-{n}"}]
            if draw(st.booleans()):
                blocks.append({"type": "redacted_thinking", "data": f"opaque-{n}"})
            call = ToolCall(id=f"c{n}", name=tool, arguments=json.dumps(args))
            out.append(Message(role="assistant", tool_calls=[call], created_at=t, meta={"thinking_blocks": blocks}))
            if draw(st.integers(0, 9)):  # now and then a call without its result (orphan repair)
                body = "x" * draw(st.integers(0, 2_000))
                if tool == "filesystem-read":
                    body = f"📄 {args['filePath']} (lines 1-1/1)\n1→{body}"
                elif tool == "terminal-execute":
                    body = json.dumps({"command": "ls", "stdout": body, "stderr": "", "exitCode": 0})
                out.append(Message(role="tool", tool_call_id=call.id, tool_name=tool, content=body, created_at=t + 5))
        out.append(Message(role="assistant", content="done", created_at=t + 10))
    return out


@hsettings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    histories(),
    st.sampled_from([EXACT, CachePolicy(mode="auto")]),
    st.one_of(st.none(), st.integers(200, 6_000)),
)
def test_every_pass_and_truncation_keep_each_tool_calls_thinking(history, policy, budget):
    by_call = {m.tool_calls[0].id: m.meta["thinking_blocks"] for m in history if m.tool_calls}
    truncate = TruncateTo(max_tokens=budget) if budget is not None else None
    build = build_api_messages(
        history, now_ms=history[-1].created_at + 60_000, settings=SETTINGS, policy=policy, truncate=truncate
    )
    for sent in build.messages:
        if sent["role"] != "assistant" or not sent.get("tool_calls"):
            assert "thinking_blocks" not in sent or sent.get("tool_calls")
            continue
        original = by_call[sent["tool_calls"][0]["id"]]
        # Present, unchanged, in the message that carries its tool calls.
        assert sent.get("thinking_blocks") == original
        assert json.dumps(sent["thinking_blocks"]) == json.dumps(original)
