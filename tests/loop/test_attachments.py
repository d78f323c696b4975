"""`@path` attachments (agent/turn/attachments.py): which paths attach, and that the read they
become is a read to the context engine (seed 000's rule manages it like the model's own)."""

from __future__ import annotations

import json

from agent.context.passes.file_reads import DEFAULT_PLACEHOLDER, apply
from agent.images import at_mentions
from agent.session.models import Message, ToolCall
from agent.turn.attachments import ATTACHED_META, attachable


def test_at_mentions_reads_bare_quoted_and_escaped_paths_outside_command_blocks():
    text = 'see @a.py, @"my notes.md" and @dir/x\\ y.txt\n<command name="c">\n@secret.txt\n</command>'
    assert at_mentions(text) == ["a.py", "my notes.md", "dir/x y.txt"]
    assert at_mentions("mail me@example.com") == []


def test_only_text_files_inside_the_workspace_attach(tmp_path):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\n")
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (ws / "data.bin").write_bytes(b"\x00\xff\x00")
    (tmp_path / "outside.txt").write_text("no\n")
    text = "@src/a.py @./src/a.py @src @logo.png @data.bin @../outside.txt @nope/x.py @alice"
    paths, notices = attachable(text, ws)
    assert paths == ["src/a.py", "src"]  # once each; a folder attaches its listing; the image is images.py's
    said = " ".join(sentence for sentence, _ in notices)
    assert "@data.bin: a binary file" in said and "@../outside.txt: outside the workspace" in said
    assert "@nope/x.py: no such file" in said and "alice" not in said


def _read(call_id: str, path: str, at: int, *, attached: bool = False) -> list[Message]:
    meta = {ATTACHED_META: True} if attached else {}
    call = ToolCall(id=call_id, name="filesystem-read", arguments=json.dumps({"filePath": path}))
    return [
        Message(role="assistant", tool_calls=[call], created_at=at, meta=meta),
        Message(
            role="tool", tool_call_id=call_id, tool_name="filesystem-read", content=f"📄 {path}\n1→x", created_at=at
        ),
    ]


def test_an_attached_read_gives_way_to_newer_reads_like_any_read():
    messages = [
        Message(role="user", content="look at @a.py", created_at=1),
        *_read("attach_1", "a.py", 1, attached=True),
    ]
    for n in range(5):
        messages += _read(f"r{n}", "./a.py", 10 + n)
    out, replaced = apply(messages, keep_recent=5)
    assert replaced == 1 and out[2].content == DEFAULT_PLACEHOLDER
