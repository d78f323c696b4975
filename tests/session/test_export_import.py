"""Session export (JSONL, Markdown) and import (cairn, Claude Code, OpenAI) against real SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.session.export import export_jsonl, export_markdown
from agent.session.importers import ImportFormatError, detect_format, import_session, parse_any
from agent.session.loading import load_session_messages, tool_result_ids, tool_use_ids
from agent.session.models import Message, ToolCall
from agent.session.store import Store
from tests.conftest import SHARED

TRANSCRIPTS = SHARED / "fixtures" / "transcripts" / "claude-code"
FIXTURES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []


async def _open(path: Path) -> Store:
    return await Store.open(path)


def _lines(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _cc(
    uuid: str,
    parent: str | None,
    kind: str,
    content,
    *,
    ts: str = "2025-01-01T10:00:00.000Z",
    msg_id: str | None = None,
    **extra,
) -> dict:
    message = {"role": kind, "content": content}
    if msg_id:
        message.update(id=msg_id, model="claude-test")
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts,
        "cwd": "/proj",
        "sessionId": "s1",
        "message": message,
        **extra,
    }


def _active(imported) -> list[Message]:
    by_id = {m.id: m for m in imported.messages}
    path, current = [], imported.head_id
    while current:
        path.append(by_id[current])
        current = by_id[current].parent_id
    return path[::-1]


# -- real Claude Code transcripts ----------------------------------------------------------------


@pytest.mark.skipif(not FIXTURES, reason=f"shared transcripts not found at {TRANSCRIPTS}")
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name[:40])
async def test_every_fixture_transcript_imports(store, path):
    text = path.read_text(encoding="utf-8")
    assert detect_format(text) == "claude-code"
    imported = parse_any(text)
    assert imported.source == "claude-code" and imported.messages and imported.title and imported.cwd
    session = await import_session(store, imported, cwd_default="/elsewhere")
    stored = await store.all_messages(session.id)
    assert len(stored) == len(imported.messages) > 0

    names = {tc.name for m in stored for tc in m.tool_calls}
    raw_names = {
        b["name"]
        for line in text.splitlines()
        if line.strip()
        for b in (json.loads(line).get("message") or {}).get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    if "Read" in raw_names:
        assert "filesystem-read" in names
    if "Bash" in raw_names:
        assert "terminal-execute" in names
    assert not names & {"Read", "Bash", "Edit", "Write"}

    raw_errors = text.count('"is_error":true')
    errors = [m for m in stored if m.role == "tool" and m.status == "error"]
    assert len(errors) == raw_errors
    assert all((m.content or "").startswith("Error:") or '"exitCode": 1' in (m.content or "") for m in errors)

    times = [m.created_at for m in stored]
    assert all(isinstance(t, int) and t > 1_500_000_000_000 for t in times)
    assert sum(1 for a, b in zip(times, times[1:], strict=False) if b < a) <= len(times) // 10

    loaded = await load_session_messages(store, session.id)
    assert loaded, "the active path is empty"
    assert tool_use_ids(loaded) <= tool_result_ids(loaded)
    assert loaded == await store.active_path(session.id)  # seed 002 had nothing to drop
    for m in loaded:
        if m.role == "tool" and m.tool_call_id in {tc.id for a in loaded for tc in a.tool_calls}:
            assert m.tool_name


# -- Claude Code: the details ----------------------------------------------------------------------


def test_claude_code_merges_split_assistant_lines_and_chains_parallel_results():
    text = _lines(
        {"type": "summary", "summary": "Fix the parser", "leafUuid": "x"},
        _cc("u1", None, "user", "read two files"),
        _cc("a1", "u1", "assistant", [{"type": "thinking", "thinking": "hmm"}], msg_id="m1"),
        _cc("a2", "a1", "assistant", [{"type": "text", "text": "Reading."}], msg_id="m1"),
        _cc(
            "a3",
            "a2",
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Read",
                    "input": {"file_path": "a.py", "offset": 10, "limit": 5},
                }
            ],
            msg_id="m1",
        ),
        _cc(
            "a4",
            "a3",
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls", "description": "list"}}],
            msg_id="m1",
        ),
        {"type": "file-history-snapshot", "messageId": "zz", "snapshot": {}},
        # Parallel results: each points at the line of its own call, the later one at a3.
        _cc(
            "r2",
            "a4",
            "user",
            [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}],
            toolUseResult={"stdout": "a.py\n", "stderr": "", "interrupted": False},
        ),
        _cc(
            "r1",
            "a3",
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "    10→x"}]}],
        ),
        {"type": "system", "uuid": "s1", "parentUuid": "r1", "content": "hook ran"},
        _cc("a5", "s1", "assistant", [{"type": "text", "text": "Done."}], msg_id="m2"),
    )
    imported = parse_any(text, "claude-code")
    assert imported.title == "Fix the parser" and imported.cwd == "/proj" and imported.model == "claude-test"
    roles = [(m.id, m.role) for m in imported.messages]
    assert roles == [("u1", "user"), ("a1", "assistant"), ("r2", "tool"), ("r1", "tool"), ("a5", "assistant")]
    assistant = imported.messages[1]
    assert assistant.content == "Reading." and assistant.meta["thinking"] == "hmm"
    assert [tc.name for tc in assistant.tool_calls] == ["filesystem-read", "terminal-execute"]
    assert json.loads(assistant.tool_calls[0].arguments) == {"filePath": "a.py", "startLine": 10, "endLine": 14}
    assert json.loads(assistant.tool_calls[1].arguments) == {"command": "ls", "description": "list"}
    assert assistant.meta["original_tool_names"] == {"t1": "Read", "t2": "Bash"}
    bash, read = imported.messages[2], imported.messages[3]
    assert json.loads(bash.content) == {"command": "ls", "stdout": "a.py\n", "stderr": "", "exitCode": 0}
    assert (bash.tool_name, bash.meta["original_tool"]) == ("terminal-execute", "Bash")
    assert read.content == "    10→x" and read.tool_name == "filesystem-read"
    # One chain: the results follow each other, the system line is passed through.
    assert [m.parent_id for m in imported.messages] == [None, "u1", "a1", "r2", "r1"]
    assert imported.head_id == "a5" and [m.id for m in _active(imported)] == ["u1", "a1", "r2", "r1", "a5"]
    assert [m.seq for m in imported.messages] == [1, 2, 3, 4, 5]


def test_claude_code_errors_content_forms_and_derived_ids():
    text = _lines(
        _cc("u1", None, "user", [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]),
        _cc(
            "a1",
            "u1",
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Edit",
                    "input": {"file_path": "f", "old_string": "a", "new_string": "b", "replace_all": True},
                }
            ],
            msg_id="m1",
        ),
        _cc(
            "a2",
            "a1",
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Glob", "input": {"pattern": "*"}}],
            msg_id="m1",
        ),
        _cc(
            "r1",
            "a2",
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "is_error": True,
                    "content": "<tool_use_error>File has not been read yet.</tool_use_error>",
                },
                {"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": "Error: bad glob"},
                {"type": "text", "text": "[Request interrupted by user]"},
            ],
            ts="2025-01-01T10:00:05.250Z",
        ),
    )
    imported = parse_any(text)
    user, assistant, edit, glob, note = imported.messages
    assert user.content == "first\nsecond" and user.created_at == 1735725600000
    assert json.loads(assistant.tool_calls[0].arguments) == {
        "filePath": "f",
        "searchContent": "a",
        "replaceContent": "b",
        "replaceAll": True,
    }
    assert assistant.tool_calls[1].name == "Glob"
    assert (edit.id, edit.status, edit.content) == ("r1", "error", "Error: File has not been read yet.")
    assert (glob.id, glob.status, glob.content, glob.tool_name) == ("r1:1", "error", "Error: bad glob", "Glob")
    assert "original_tool" not in glob.meta
    assert (note.id, note.role, note.parent_id) == ("r1:2", "user", "r1:1")
    assert edit.created_at == 1735725605250 and imported.head_id == "r1:2"
    assert imported.title == "first second"


def test_claude_code_broken_line_names_its_number():
    text = _lines(_cc("u1", None, "user", "hi")) + '{"type": "assistant", "uuid": \n'
    with pytest.raises(ImportFormatError, match="line 2"):
        parse_any(text)
    with pytest.raises(ImportFormatError, match="line 2"):
        parse_any(text, "claude-code")


def test_claude_code_without_conversation_is_an_error():
    with pytest.raises(ImportFormatError, match="no user or assistant"):
        parse_any(_lines({"type": "summary", "summary": "x"}), "claude-code")


# -- OpenAI chat JSON ---------------------------------------------------------------------------------

OPENAI = [
    {"role": "system", "content": "You are helpful."},
    {
        "role": "user",
        "content": [{"type": "text", "text": "run"}, {"type": "text", "text": "ls"}],
        "timestamp": 1738287600000,
    },
    {
        "role": "assistant",
        "content": None,
        "timestamp": 1738287601000,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"stdout": "", "stderr": "boom", "exitCode": 1}',
        "timestamp": 1738287602000,
        "messageStatus": "error",
    },
    {"role": "assistant", "content": "It failed."},
]


@pytest.mark.parametrize("form", ["list", "object"])
def test_openai_list_and_object_forms(form):
    data = OPENAI if form == "list" else {"title": "Shell", "cwd": "/w", "model": "gpt-x", "messages": OPENAI}
    text = json.dumps(data)
    assert detect_format(text) == "openai"
    imported = parse_any(text)
    user, call, result, answer = imported.messages
    assert user.content == "run\nls" and user.created_at == 1738287600000
    assert call.tool_calls[0].name == "terminal-execute" and call.meta["original_tool_names"] == {"c1": "bash"}
    assert (result.tool_name, result.status, result.meta["original_tool"]) == ("terminal-execute", "error", "bash")
    assert result.created_at == 1738287602000 and answer.created_at == 0  # no timestamp: no age
    assert [m.parent_id for m in imported.messages] == [None, user.id, call.id, result.id]
    assert imported.head_id == answer.id and [m.seq for m in imported.messages] == [1, 2, 3, 4]
    if form == "object":
        assert (imported.title, imported.cwd, imported.model) == ("Shell", "/w", "gpt-x")
    else:
        assert imported.title == "run ls"


def test_openai_errors():
    with pytest.raises(ImportFormatError, match="unknown role"):
        parse_any(json.dumps([{"role": "robot", "content": "x"}]), "openai")
    with pytest.raises(ImportFormatError, match="not valid JSON"):
        parse_any("[{", "openai")
    with pytest.raises(ImportFormatError, match="not a recognised"):
        parse_any("hello")
    with pytest.raises(ImportFormatError, match="empty"):
        parse_any("  \n")


# -- our JSONL: lossless round trips ------------------------------------------------------------------


async def _branched_session(store: Store):
    session = await store.create_session(cwd="/w", model="openai/fake", title="Branches ü")
    u = await store.append(session, Message(role="user", content="hello — 你好", created_at=1000))
    a = await store.append(
        session,
        Message(
            role="assistant",
            content="",
            created_at=2000,
            tool_calls=[ToolCall(id="c1", name="terminal-execute", arguments='{"command":"ls"}')],
            meta={"usage": {"x": 1}},
        ),
    )
    await store.append(
        session,
        Message(
            role="tool",
            tool_call_id="c1",
            tool_name="terminal-execute",
            content='{"command":"ls","stdout":"","stderr":"","exitCode":0}',
            created_at=3000,
        ),
    )
    abandoned = await store.append(session, Message(role="assistant", content="old answer", created_at=4000))
    # Rewind: a new answer from the user's message; the old branch stays stored.
    await store.append(
        session,
        Message(role="user", content="again", parent_id=u.id, created_at=5000, status="interrupted", kind="note"),
    )
    return await store.get_session(session.id), abandoned, a


async def test_jsonl_round_trip_into_a_fresh_database_is_byte_identical(store, tmp_path):
    session, abandoned, _ = await _branched_session(store)
    first = export_jsonl(session, await store.all_messages(session.id))
    header = json.loads(first.splitlines()[0])
    assert header["format"] == "cairn-session" and header["version"] == 1 and header["type"] == "session"
    assert first.endswith("\n") and len(first.splitlines()) == 6 and "你好" in first
    assert detect_format(first) == "cairn"

    other = await _open(tmp_path / "other.db")
    try:
        imported = await import_session(other, parse_any(first), cwd_default="/ignored")
        assert imported.id == session.id
        again = export_jsonl(await other.get_session(imported.id), await other.all_messages(imported.id))
        assert (await other.get_message(abandoned.id)).content == "old answer"  # the branch came along
    finally:
        await other.close()
    assert again == first


async def test_jsonl_into_the_same_database_remaps_every_id(store):
    session, abandoned, _ = await _branched_session(store)
    original = export_jsonl(session, await store.all_messages(session.id))
    copy = await import_session(store, parse_any(original, "cairn"), cwd_default="/ignored")
    assert copy.id != session.id
    mine = await store.all_messages(copy.id)
    theirs = await store.all_messages(session.id)
    mapping = {old.id: new.id for old, new in zip(theirs, mine, strict=False)}
    assert len(set(mapping.values())) == len(mapping) and not set(mapping) & set(mapping.values())
    mapping[session.id] = copy.id
    expected = []
    for line in original.splitlines():
        record = json.loads(line)
        for key in ("id", "session_id", "parent_id", "head_id"):
            if record.get(key) is not None:
                record[key] = mapping[record[key]]
        expected.append(record)
    exported = export_jsonl(copy, mine)
    assert [json.loads(line) for line in exported.splitlines()] == expected
    # Tool call ids are unchanged; the copy's active path skips the abandoned branch, as before.
    assert [tc.id for m in mine for tc in m.tool_calls] == ["c1"]
    assert [m.content for m in await store.active_path(copy.id)] == ["hello — 你好", "again"]
    assert mapping[abandoned.id] in {m.id for m in mine}


async def test_import_keeps_free_ids_and_replaces_a_taken_session_id(store):
    text = json.dumps(
        [{"id": "m1", "role": "user", "content": "hi"}, {"id": "m2", "role": "assistant", "content": "yo"}]
    )
    first = await import_session(store, parse_any(text), cwd_default="/here")
    assert first.cwd == "/here" and first.head_id == "m2" and first.title == "hi"
    assert [m.id for m in await store.all_messages(first.id)] == ["m1", "m2"]
    second = await import_session(store, parse_any(text), cwd_default="/here")
    ids = [m.id for m in await store.all_messages(second.id)]
    assert "m1" not in ids and second.head_id == ids[1]
    assert (await store.get_message(ids[1])).parent_id == ids[0]

    cairn = export_jsonl(first, await store.all_messages(first.id))
    third = await import_session(store, parse_any(cairn), cwd_default="/x")
    assert third.id not in (first.id, second.id)


def test_cairn_broken_lines():
    good = export_jsonl(*_tiny())
    with pytest.raises(ImportFormatError, match="line 2"):
        parse_any(good.splitlines()[0] + "\n{oops\n")
    broken = good.splitlines()[0] + "\n" + json.dumps({"type": "message", "role": "wizard"}) + "\n"
    with pytest.raises(ImportFormatError, match="line 2: role"):
        parse_any(broken)
    newer = good.replace('"version":1', '"version":99')
    with pytest.raises(ImportFormatError, match="version 99"):
        parse_any(newer)


def _tiny():
    from agent.session.models import Session

    session = Session(id="s", title="t", cwd="/w", created_at=1, updated_at=2, head_id="m")
    return session, [Message(id="m", session_id="s", seq=1, role="user", content="hi", created_at=1)]


# -- Markdown -----------------------------------------------------------------------------------------


async def test_markdown_shows_the_loaded_active_path(store):
    session, _, a = await _branched_session(store)
    # Continue from the tool result branch so the transcript has a call, a result and an error.
    await store.set_head(session, (await store.all_messages(session.id))[2].id)
    session = await store.get_session(session.id)
    await store.append(
        session,
        Message(
            role="assistant",
            content="```py\ncode\n```",
            created_at=6000,
            tool_calls=[ToolCall(id="c2", name="filesystem-read", arguments='{"filePath":"a.py"}')],
        ),
    )
    await store.append(
        session,
        Message(
            role="tool",
            tool_call_id="c2",
            tool_name="filesystem-read",
            content="Error: no such file\n```",
            status="error",
            created_at=7000,
        ),
    )
    await store.append(
        session,
        Message(role="assistant", content="x", tool_calls=[ToolCall(id="c3", name="terminal-execute", arguments="{}")]),
    )  # unanswered: left out
    md = export_markdown(session, await load_session_messages(store, session.id))
    assert md.startswith("# Branches ü\n")
    assert f"`{session.id}`" in md and "`/w`" in md and "1970-01-01 00:00:01 UTC" in md
    assert "## User · " in md and "## Assistant · " in md
    assert "**Tool call** `filesystem-read` (`c2`)" in md and '"filePath": "a.py"' in md
    assert "### Error from `filesystem-read` (error)" in md and "Error: no such file" in md
    assert "### Result of `terminal-execute`" in md
    assert "````\nError: no such file\n```\n````" in md and "```json" in md
    assert "old answer" not in md and "again" not in md and "`c3`" not in md


def test_claude_code_result_between_split_lines_and_leading_snapshots():
    snapshots = [{"type": "file-history-snapshot", "messageId": f"s{n}", "snapshot": {}} for n in range(30)]
    text = _lines(
        *snapshots,
        _cc("u1", None, "user", "go"),
        _cc(
            "a1",
            "u1",
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "n.txt", "content": "x"}}],
            msg_id="m1",
        ),
        _cc("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "written"}]),
        # Same API response, written after the first result: still one assistant message.
        _cc(
            "a2",
            "r1",
            "assistant",
            [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}],
            msg_id="m1",
        ),
        _cc("r2", "a2", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": "n.txt"}]),
    )
    assert detect_format(text) == "claude-code"
    imported = parse_any(text)
    assert [m.id for m in imported.messages] == ["u1", "a1", "r1", "r2"]
    assert [tc.id for tc in imported.messages[1].tool_calls] == ["t1", "t2"]
    assert json.loads(imported.messages[1].tool_calls[0].arguments) == {"filePath": "n.txt", "content": "x"}
    assert imported.messages[1].tool_calls[0].name == "filesystem-create"
    assert imported.head_id == "r2" and imported.messages[3].parent_id == "r1"
    assert imported.messages[3].content == "n.txt"  # no toolUseResult: the text is kept
