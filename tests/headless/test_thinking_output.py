"""Issue 28 headless: a model's thinking in `cairn -p`'s machine output, through the installed
`cairn` against the fakes. stream-json: one `thinking` line per piece as it streams (before
the answer's `text` lines, same message id), the whole text on the `assistant` line, the
reasoning tokens on the `usage` line; never a signature. json: the stored message in `messages`
carries it (`meta.thinking`). text: only the answer."""

from __future__ import annotations

import json

from tests.fakes.anthropic_server import Thinking, tool_use
from tests.fakes.anthropic_server import text as claude_text
from tests.fakes.llm_server import FakeLLMServer, text
from tests.headless.helpers import base_args, cairn, events, needs_cairn

pytestmark = needs_cairn

REASONING = "Six sevens: 7, 14, 21, 28, 35, 42. So the answer is forty-two."


def test_stream_json_has_thinking_events_before_the_text(workspace):
    with FakeLLMServer([text("Forty-two.", reasoning=REASONING, reasoning_tokens=17, chunk_size=6)]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "six times seven?", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    types = [e["type"] for e in lines]
    thinking = [e for e in lines if e["type"] == "thinking"]
    assert len(thinking) > 1  # piece by piece, as it streamed
    assert "".join(e["text"] for e in thinking) == REASONING
    assert all(set(e) == {"type", "message_id", "text"} for e in thinking)
    texts = [e for e in lines if e["type"] == "text"]
    assert {e["message_id"] for e in thinking} == {e["message_id"] for e in texts}
    assert max(i for i, t in enumerate(types) if t == "thinking") < types.index("text")
    assistant = next(e for e in lines if e["type"] == "assistant")
    assert assistant["thinking"] == REASONING and assistant["text"] == "Forty-two."
    usage = next(e for e in lines if e["type"] == "usage")
    assert usage["reasoning_tokens"] == 17
    assert lines[-1]["type"] == "result" and lines[-1]["text"] == "Forty-two."


def test_json_and_text_output(workspace):
    with FakeLLMServer([text("Forty-two.", reasoning=REASONING), text("Still 42.", reasoning=REASONING)]) as srv:
        as_json = cairn(*base_args(srv, workspace), "-p", "six times seven?", "--output-format", "json")
        as_text = cairn(*base_args(srv, workspace), "-p", "and now?")
    assert as_json.returncode == 0, as_json.stderr
    [answer] = [m for m in json.loads(as_json.stdout)["messages"] if m["role"] == "assistant"]
    assert answer["meta"]["thinking"] == REASONING and answer["content"] == "Forty-two."
    assert as_text.returncode == 0, as_text.stderr
    assert as_text.stdout.strip() == "Still 42."  # the thinking is not the answer


def test_claude_thinking_in_stream_json_without_signatures(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        tool_use(
            [("toolu_1", "filesystem-read", {"filePath": "a.py"})],
            thinking=[Thinking("Read a.py first.", "SIGNATURE-ONE")],
        ),
        claude_text("x is 1.", thinking=[Thinking("It says x = 1.", "SIGNATURE-TWO")]),
    )
    args = base_args(anthropic_server, workspace, model="anthropic/claude-sonnet-4-5")
    out = cairn(*args, "--yolo", "--effort", "high", "-p", "what is x?", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    thinking = "".join(e["text"] for e in lines if e["type"] == "thinking")
    assert thinking == "Read a.py first." + "It says x = 1."
    answers = [e for e in lines if e["type"] == "assistant"]
    assert [a.get("thinking") for a in answers] == ["Read a.py first.", "It says x = 1."]
    assert "SIGNATURE" not in out.stdout
    # The signed block went back before the tool call (the fake refuses the request otherwise).
    answered = anthropic_server.requests[1]["messages"][-2]["content"][0]
    assert answered == {"type": "thinking", "thinking": "Read a.py first.", "signature": "SIGNATURE-ONE"}
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "ok"
