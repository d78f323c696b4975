"""A loaded skill stays loaded for the session (SPEC §13.3): no pass previews, retires or drops
a `skill-load` result, however long or old it is (smart truncation's step 2 keeps it too:
tests/context/truncation/test_tool_filter_skills.py)."""

from __future__ import annotations

import json

from agent.context.passes import externalize
from agent.context.pipeline import build_api_messages
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings

LIMIT, PREVIEW = 5000, 1024
BODY = "\n".join(f"Step {i}: do the release the house way, SKILL_LINE_{i}." for i in range(400))  # ~20k chars
HOUR = 3_600_000


def _loaded(call_id: str = "k1", at: int = 0) -> list[Message]:
    call = ToolCall(id=call_id, name="skill-load", arguments=json.dumps({"name": "release"}))
    return [
        Message(role="assistant", content=None, tool_calls=[call], created_at=at),
        Message(role="tool", tool_call_id=call_id, tool_name="skill-load", content=BODY, created_at=at),
    ]


def test_externalize_sends_a_long_skill_body_whole():
    [_, result] = _loaded()
    out, changed = externalize.apply([result], limit=LIMIT, preview=PREVIEW)
    assert changed == 0 and out[0] is result
    other = result.model_copy(update={"tool_name": "filesystem-search"})
    [sent], changed = externalize.apply([other], limit=LIMIT, preview=PREVIEW)
    assert changed == 1 and "SKILL_LINE_200" not in sent.content  # the same text from another tool is previewed


def test_every_pass_leaves_an_old_skill_body_whole():
    """An hour later, after many commands and reads, under the tightest retirement settings."""
    settings = Settings.model_validate(
        {
            "workspace": "/ws",
            "context": {"terminal_keep_recent_results": 1, "file_keep_recent_reads": 1, "terminal_max_age_ms": 1},
        }
    )
    history = [Message(role="user", content="release it", created_at=0), *_loaded(at=1)]
    for i in range(6):
        calls = [
            ToolCall(id=f"t{i}", name="terminal-execute", arguments=json.dumps({"command": "make"})),
            ToolCall(id=f"r{i}", name="filesystem-read", arguments=json.dumps({"filePath": "a.py"})),
        ]
        history += [
            Message(role="assistant", content=None, tool_calls=calls, created_at=10 + i),
            Message(
                role="tool",
                tool_call_id=f"t{i}",
                tool_name="terminal-execute",
                content=json.dumps({"command": "make", "stdout": "x" * 6000, "stderr": "", "exitCode": 0}),
                created_at=10 + i,
            ),
            Message(
                role="tool",
                tool_call_id=f"r{i}",
                tool_name="filesystem-read",
                content="📄 a.py (lines 1-1/1)\n1→x = 1",
                created_at=10 + i,
            ),
        ]
    history.append(Message(role="assistant", content="done", created_at=20))
    result = build_api_messages(history, now_ms=HOUR, settings=settings)
    changed = {r.name for r in result.report if r.changed}
    assert {"terminal_outdated", "file_reads"} <= changed  # the passes ran, and retired others
    [sent] = [m for m in result.messages if m.get("tool_call_id") == "k1"]
    assert sent["content"] == BODY
