"""The session as Claude Code's transcript (agent/hooks/transcript.py): appended, never
rewritten; a resumed session's file is read for what it holds, so nothing is written twice."""

from __future__ import annotations

import json

from agent.hooks.transcript import Transcript
from agent.session.models import Message, ToolCall


def conversation() -> list[Message]:
    call = ToolCall(id="c1", name="filesystem-edit", arguments=json.dumps({"filePath": "a.py", "searchContent": "x"}))
    return [
        Message(role="user", content="rename x"),
        Message(role="assistant", content="On it.", tool_calls=[call], meta={"model": "m"}),
        Message(role="tool", tool_call_id="c1", tool_name="filesystem-edit", content="Error: no match", status="error"),
        Message(role="assistant", content="x is not there."),
    ]


def test_lines_are_claude_codes_and_each_message_is_written_once_across_runs(tmp_path):
    messages = conversation()
    path = Transcript(tmp_path).sync("s1", messages[:2], tmp_path / "ws")
    Transcript(tmp_path).sync("s1", messages, tmp_path / "ws")  # a later process: reads what is there
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["uuid"] for r in lines] == [m.id for m in messages]
    assert [r["parentUuid"] for r in lines] == [None, *[m.id for m in messages[:-1]]]
    edit = lines[1]["message"]["content"][1]
    assert edit == {
        "type": "tool_use",
        "id": "c1",
        "name": "Edit",
        "input": {"file_path": str(tmp_path / "ws" / "a.py"), "old_string": "x"},
    }
    assert lines[2]["message"]["content"][0]["is_error"] is True
    assert '"role":"assistant"' in path.read_text().splitlines()[3]  # compact, as Claude Code writes it


def test_a_rewound_branch_links_to_the_message_it_grew_from(tmp_path):
    messages = conversation()
    transcript = Transcript(tmp_path)
    transcript.sync("s1", messages, tmp_path)
    other = Message(role="user", content="do it differently")
    path = transcript.sync("s1", [*messages[:2], other], tmp_path)
    last = json.loads(path.read_text().splitlines()[-1])
    assert (last["uuid"], last["parentUuid"]) == (other.id, messages[1].id)
