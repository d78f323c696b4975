"""Issue 17, "Import: every common agent format, never lossy in silence": "Gemini CLI and
Mistral Vibe session files if their formats are documented in their repos".

Both are: the fixtures in tests/session/fixtures/ are written from their source (see the README
there: repository, path and commit of each format). Tool calls become tool_calls with their
results paired, what cairn has no place for is a note or a `skipped` entry with its reason,
and `cairn session import` prints the report. Every other format's files are still detected
as their own.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.session.export import export_jsonl
from agent.session.importers import ImportFormatError, detect_format, import_session, parse_any
from agent.session.loading import load_session_messages, tool_result_ids, tool_use_ids
from agent.session.models import Message, Session
from agent.session.store import Store
from tests.conftest import SHARED
from tests.hostile.conftest import bounded, bounded_sync
from tests.session.test_importers_more import CODEX, MINI, _calls, _results
from tests.test_cli import CAIRN, run

FIXTURES = Path(__file__).parent / "fixtures"
GEMINI = FIXTURES / "gemini-cli" / "session-2026-08-20T09-14-3f9c2a1b.jsonl"
GEMINI_LEGACY = FIXTURES / "gemini-cli" / "session-2025-11-03T16-40-7a0e4c21.json"
VIBE = FIXTURES / "mistral-vibe" / "messages.jsonl"
VIBE_META = FIXTURES / "mistral-vibe" / "meta.json"
VIBE_LEGACY = FIXTURES / "mistral-vibe" / "session_20251202_140311_8d4f2b6a.json"
TRANSCRIPTS = SHARED / "fixtures" / "transcripts"


def _whats(imported):
    return [s["what"] for s in imported.skipped]


async def _survives_loading(store, imported):
    """Every call has its result, so seed 002's load view drops nothing."""
    session = await import_session(store, imported, cwd_default="/w")
    loaded = await load_session_messages(store, session.id)
    assert loaded == await store.active_path(session.id)
    assert tool_use_ids(loaded) == tool_result_ids(loaded)
    return session, loaded


# -- Gemini CLI -------------------------------------------------------------------------------------


async def test_gemini_cli_session_jsonl(store):
    text = GEMINI.read_text("utf-8")
    assert detect_format(text) == "gemini-cli"
    imported = parse_any(text)
    calls, results = _calls(imported), _results(imported)
    assert [(c.id, c.name) for c in calls] == [
        ("run_shell_command-1787217193377-8f2a1c", "terminal-execute"),
        ("read_file-1787217202300-1b9e4d", "read_file"),
        ("replace-1787217202301-6c0d2a", "replace"),
    ]
    assert json.loads(calls[0].arguments) == {
        "command": "npm test --workspace packages/core",
        "workingDirectory": "packages/core",
    }
    shell_call = imported.messages[1]
    assert shell_call.meta["original_tool_names"] == {calls[0].id: "run_shell_command"}
    assert shell_call.meta["original_arguments"][calls[0].id]["description"] == "Run the core package's tests."
    assert shell_call.meta["thinking"] == (
        "**Reproducing the failure** I will run the core package's tests to see the error."
    )
    assert shell_call.meta["tokens"]["total"] == 9248  # the record written again with its tokens
    # each result follows its call, in order; a tool error reads `Error:` with status error
    assert [r.tool_call_id for r in results] == [c.id for c in calls]
    assert [r.status for r in results] == ["ok", "ok", "error"]
    assert results[0].content.startswith("Output: FAIL src/config.test.ts")
    assert results[2].content.startswith("Error: Failed to edit, 0 occurrences found")
    assert results[0].tool_name == "terminal-execute" and results[0].meta["original_tool"] == "run_shell_command"
    # the user typed a short prompt; the model got it with the referenced file
    first = imported.messages[0]
    assert "Content from @src/config.ts" in first.content
    assert first.meta["display_content"] == [{"text": first.content.split("\n")[0]}]
    # the rewound exchange is gone, the one after it is there
    contents = [m.content for m in imported.messages]
    assert "Also bump the package version." not in contents and "Which version should it be?" not in contents
    assert contents[-3:-1] == ["Thanks, I'll fix it myself.", "Sounds good."]
    notes = [m for m in imported.messages if m.kind == "note"]
    assert [n.content for n in notes] == [
        "/stats",
        "[info] Session stats: 3 requests, 28,695 input tokens.",
        "[warning] Gemini 2.5 Pro quota reached: switched to Gemini 2.5 Flash.",
    ]
    assert {
        "2 × removed by a rewind",
        "3 × tool call display fields",
        "3 × tool result repeated in a user message",
    } <= set(_whats(imported))
    assert imported.title == "Fix failing core tests after config change"  # the session's summary
    assert imported.model == "gemini-2.5-flash"  # the last answer's
    session, loaded = await _survives_loading(store, imported)
    started = datetime(2026, 8, 20, 9, 14, 2, 118000, tzinfo=UTC)
    assert session.created_at == int(started.timestamp() * 1000)  # the session's startTime
    assert len(loaded) == len(imported.messages)


async def test_gemini_cli_legacy_json_file(store):
    text = GEMINI_LEGACY.read_text("utf-8")
    assert detect_format(text) == "gemini-cli"
    imported = parse_any(text)
    search, shell = _calls(imported)
    assert (search.name, json.loads(shell.arguments)) == (
        "search_file_content",
        {"command": "git blame -L 12,12 src/main.py", "workingDirectory": "."},
    )
    found, cancelled = _results(imported)
    assert found.status == "ok" and 'Found 2 matches for pattern "TODO"' in found.content
    # a call the user cancelled is interrupted, not failed
    assert (cancelled.tool_call_id, cancelled.status) == (shell.id, "interrupted")
    assert cancelled.content == "[Operation Cancelled] Reason: User cancelled the operation."
    assert cancelled.meta["gemini_status"] == "cancelled"
    assert imported.messages[1].meta["thinking"] == "**Searching** A grep for TODO finds them."
    assert imported.messages[-1].content.startswith("There are two TODOs")
    await _survives_loading(store, imported)


def _gemini(*records) -> str:
    head = {
        "sessionId": "s-1",
        "projectHash": "ab12",
        "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": "2026-01-01T00:00:00.000Z",
    }
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in (head, *records))


def test_gemini_cli_rewritten_history_unknown_parts_and_records_are_reported():
    """A `$set` of messages replaces the history (as /compress writes it): calls may then be
    `functionCall` parts and results `functionResponse` parts of the next user message."""
    old = {"id": "m0", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": "old question"}
    rewritten = [
        {
            "id": "m1",
            "timestamp": "2026-01-01T00:00:02Z",
            "type": "user",
            "content": [{"text": "<session_context>\nsummary</session_context>"}],
        },
        {
            "id": "m2",
            "timestamp": "2026-01-01T00:00:03Z",
            "type": "gemini",
            "content": [
                {"text": "Planning the listing.", "thought": True},
                {"text": "Listing."},
                {"functionCall": {"id": "c1", "name": "list_directory", "args": {"dir_path": "."}}},
                {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
            ],
        },
        {
            "id": "m3",
            "timestamp": "2026-01-01T00:00:04Z",
            "type": "user",
            "content": [
                {"functionResponse": {"id": "c1", "name": "list_directory", "response": {"output": "a.txt"}}},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0"}},
            ],
        },
    ]
    text = _gemini(
        old,
        '{"id": "m9", "type": "us',
        {"$set": {"messages": rewritten}},
        {"kind_of": "mystery"},
        {"id": "m4", "timestamp": "2026-01-01T00:00:05Z", "type": "critique", "content": "hm"},
    )
    imported = parse_any(text)
    context, code, answer, result, image, unknown = imported.messages
    assert context.kind == "note" and context.content.startswith("<session_context>")
    assert (answer.content, answer.meta["thinking"]) == ("Listing.", "Planning the listing.")
    [call] = answer.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("c1", "list_directory", {"dir_path": "."})
    assert (result.role, result.tool_call_id, result.content) == ("tool", "c1", "a.txt")
    assert image.role == "user" and image.content == "[image]" and image.meta["images"][0]["inlineData"]["mimeType"]
    assert code.kind == "note" and '"executableCode"' in code.content
    assert unknown.kind == "note" and "critique" in unknown.content
    whats = _whats(imported)
    assert "a line that is not a JSON object" in whats
    assert "1 × replaced by a rewritten history" in whats
    assert "record of an unknown kind" in whats and "executableCode part" in whats
    assert "message of type 'critique'" in whats and "injected context (session or hook context)" in whats


def test_gemini_cli_refuses_a_session_without_messages():
    with pytest.raises(ImportFormatError, match="no user or model messages"):
        parse_any(_gemini())


# -- Mistral Vibe -----------------------------------------------------------------------------------


async def test_mistral_vibe_messages_jsonl(store):
    text = VIBE.read_text("utf-8")
    assert detect_format(text) == "mistral-vibe"
    imported = parse_any(text)
    calls, results = _calls(imported), _results(imported)
    assert [(c.id, c.name) for c in calls] == [
        ("Qm3xY7pLk", "grep"),
        ("Hs8vN2qWe", "read"),
        ("Jt4cR9mZa", "terminal-execute"),
        ("Kp1sT6vXb", "edit"),
    ]
    assert json.loads(calls[2].arguments) == {"command": "python -m app --config empty.toml"}
    assert [r.tool_call_id for r in results] == [c.id for c in calls]
    # <tool_error> is a failure, <user_cancellation> an interruption; the tags are gone
    assert [r.status for r in results] == ["ok", "ok", "error", "interrupted"]
    assert (
        results[2].content.startswith("Error: bash failed: Command failed:")
        and "<tool_error>" not in results[2].content
    )
    assert (
        results[3].content == "Tool execution skipped by user." and results[3].meta["vibe_tag"] == "user_cancellation"
    )
    first_answer = imported.messages[1]
    assert first_answer.id == "1d7f3b5a-8c2e-4f49-8b63-2a4d6e8f0c31"  # Vibe's message_id is kept
    assert first_answer.meta["thinking"].startswith("The crash is probably in the TOML loader")
    assert first_answer.meta["reasoning_state"] == {"reasoning_message_id": "r-5b7d9f1a-3c5e-4a70-8b92-d4f6a8c0e231"}
    injected = next(m for m in imported.messages if m.kind == "note")
    assert injected.role == "user" and injected.content.startswith("<vibe_warning>The user has manually updated")
    with_image = next(m for m in imported.messages if m.meta.get("images"))
    assert (
        with_image.content.endswith("\n[image: traceback.png]")
        and with_image.meta["images"][0]["mime_type"] == "image/png"
    )
    assert _whats(imported) == ["injected message (Vibe's own: compaction summary, hook or plan notice)"]
    assert imported.title == "The CLI crashes when the config file is empty. Can you fix it?"[:60]
    await _survives_loading(store, imported)


async def test_mistral_vibe_1x_session_file(store):
    text = VIBE_LEGACY.read_text("utf-8")
    assert detect_format(text) == "mistral-vibe"
    imported = parse_any(text)
    [call] = _calls(imported)
    [result] = _results(imported)
    assert (call.name, result.tool_call_id, result.tool_name) == ("read_file", call.id, "read_file")
    assert imported.cwd == "/home/dev/site" and imported.title == "What does the build script do?"
    assert imported.skipped == [
        {"where": "message 1", "what": "system message", "reason": "cairn builds its own system prompt"}
    ]
    session, _ = await _survives_loading(store, imported)
    assert session.cwd == "/home/dev/site"


def test_mistral_vibe_meta_json_names_the_file_to_import():
    text = VIBE_META.read_text("utf-8")
    assert detect_format(text) == "mistral-vibe"
    with pytest.raises(ImportFormatError, match="import that file") as caught:
        parse_any(text)
    assert "messages.jsonl" in str(caught.value)


def test_mistral_vibe_unknown_fields_and_roles_are_kept_and_reported():
    lines = [
        {"role": "user", "content": "hi", "injected": False, "message_id": "u1", "mood": "curious"},
        {"role": "assistant", "content": "hello", "injected": False, "message_id": "a1", "mood": "calm"},
        {"role": "tool", "content": "stray", "injected": False, "tool_call_id": "nope", "name": "bash"},
    ]
    imported = parse_any("".join(json.dumps(line) + "\n" for line in lines))
    assert imported.source == "mistral-vibe"
    assert [m.meta["vibe_fields"] for m in imported.messages[:2]] == [{"mood": "curious"}, {"mood": "calm"}]
    assert "field 'mood' on 2 messages" in _whats(imported)


# -- detection stays unambiguous --------------------------------------------------------------------


def _cairn_export() -> str:
    session = Session(id="s-1", title="t", cwd="/w", created_at=1, updated_at=2, head_id="m1", model="x")
    return export_jsonl(session, [Message(id="m1", session_id="s-1", role="user", content="hi", seq=1, created_at=1)])


def _examples() -> list[tuple[str, str, str]]:
    """(name, text, its format) for every fixture file and inline example of every format."""
    found = [(p.name, p.read_text("utf-8"), p.parent.name) for p in sorted(FIXTURES.rglob("*.json*"))]
    by_folder = {"claude-code": "claude-code", "cline": "openai", "swe-agent": "swe-agent"}
    if TRANSCRIPTS.exists():
        found += [
            (p.name, p.read_text("utf-8"), by_folder[p.parent.name])
            for p in sorted(TRANSCRIPTS.rglob("*"))
            if p.is_file() and p.parent.name in by_folder
        ]
    found += [
        ("mini-swe-agent example", json.dumps(MINI), "mini-swe-agent"),
        ("codex example", CODEX, "codex"),
        ("cairn export", _cairn_export(), "cairn"),
        ("openai list", json.dumps([{"role": "user", "content": "hi"}]), "openai"),
        ("openai object", json.dumps({"messages": [{"role": "user", "content": "hi"}]}), "openai"),
    ]
    return found


def test_every_fixture_is_detected_as_its_own_format():
    examples = _examples()
    assert {fmt for _, _, fmt in examples} >= {
        "gemini-cli",
        "mistral-vibe",
        "mini-swe-agent",
        "codex",
        "cairn",
        "openai",
    }
    assert [(name, detect_format(text)) for name, text, _ in examples] == [(name, fmt) for name, _, fmt in examples]


# -- through the installed CLI ----------------------------------------------------------------------


@pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
@pytest.mark.parametrize(
    ("path", "fmt", "line"),
    [
        (
            GEMINI,
            "gemini-cli",
            "Imported 12 messages (gemini-cli): 2 user, 4 assistant, 3 tool calls, 3 tool results (1 errors), 3 notes.",
        ),
        (
            VIBE,
            "mistral-vibe",
            "Imported 11 messages (mistral-vibe): 2 user, 4 assistant, 4 tool calls, 4 tool results "
            "(1 errors), 1 notes.",
        ),
    ],
)
def test_cli_import_prints_the_report(workspace, path, fmt, line):
    out = run("session", "import", str(path), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.splitlines()[0] == line
    assert "Skipped or kept as notes:" in out.stderr
    session_id = out.stdout.strip()
    out = run("session", "import", str(path), "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["format"] == fmt and summary["session_id"] != session_id  # a second, separate copy
    assert summary["imported"]["tool_calls"] == summary["imported"]["tool_results"]
    assert all(s["reason"] for s in summary["skipped"])
    listed = json.loads(run("session", "list", "--json").stdout)
    assert {session_id, summary["session_id"]} <= {row["id"] for row in listed}


# -- any records: a clear refusal or a session that loads -------------------------------------------

values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=6),
        st.sampled_from(["m1", "m2", "c1", "/x", "<session_context>"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)
IDS = st.sampled_from(["m1", "m2", "m3"])
parts = st.lists(
    st.one_of(
        st.fixed_dictionaries({"text": st.text(max_size=5) | values}, optional={"thought": values}),
        st.fixed_dictionaries(
            {
                "functionCall": st.fixed_dictionaries(
                    {}, optional={"id": st.sampled_from(["c1", "c2"]) | values, "name": values, "args": values}
                )
                | values
            }
        ),
        st.fixed_dictionaries(
            {
                "functionResponse": st.fixed_dictionaries(
                    {}, optional={"id": st.sampled_from(["c1", "c2"]) | values, "name": values, "response": values}
                )
                | values
            }
        ),
        st.fixed_dictionaries({"inlineData": values}),
        values,
    ),
    max_size=3,
)
tool_calls = st.lists(
    st.fixed_dictionaries(
        {"id": st.sampled_from(["c1", "c2"]) | values},
        optional={
            "name": st.sampled_from(["run_shell_command", "read_file"]) | values,
            "args": values,
            "result": parts | values,
            "status": st.sampled_from(["success", "error", "cancelled"]) | values,
        },
    ),
    max_size=2,
)
gemini_message = st.fixed_dictionaries(
    {"id": IDS | values},
    optional={
        "type": st.sampled_from(["user", "gemini", "info", "odd"]) | values,
        "content": parts | values,
        "toolCalls": tool_calls | values,
        "thoughts": values,
        "timestamp": values,
        "displayContent": values,
    },
)
gemini_records = st.lists(
    st.one_of(
        gemini_message,
        st.fixed_dictionaries({"$rewindTo": IDS | values}),
        st.fixed_dictionaries(
            {
                "$set": st.fixed_dictionaries(
                    {}, optional={"messages": st.lists(gemini_message, max_size=3) | values, "summary": values}
                )
            }
        ),
        values,
    ),
    max_size=6,
)
vibe_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system"]) | values, "message_id": IDS | values},
        optional={
            "content": values,
            "injected": values,
            "tool_call_id": values,
            "name": values,
            "images": values,
            "reasoning_content": values,
            "tool_calls": st.lists(
                st.dictionaries(st.sampled_from(["id", "function", "type"]), values, max_size=3), max_size=2
            )
            | values,
        },
    ),
    min_size=1,
    max_size=6,
)
PROPERTY = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@PROPERTY
@given(records=gemini_records)
def test_any_gemini_cli_records(tmp_path, records):
    _import_or_refuse(tmp_path, _gemini(*(json.dumps(r) for r in records)), "gemini-cli")


@PROPERTY
@given(messages=vibe_messages)
def test_any_mistral_vibe_messages(tmp_path, messages):
    _import_or_refuse(tmp_path, "".join(json.dumps(m) + "\n" for m in messages), "mistral-vibe")


def _import_or_refuse(tmp_path, text: str, fmt: str) -> None:
    """Either ImportFormatError, or a stored session whose active path loads."""

    async def go():
        store = await Store.open(tmp_path / "prop.db")
        try:
            try:
                imported = bounded_sync(lambda: parse_any(text, fmt), 30)
            except ImportFormatError:
                return
            session = await bounded(import_session(store, imported, cwd_default="/ws"), 30)
            await bounded(load_session_messages(store, session.id), 30)
        finally:
            await store.close()

    asyncio.run(go())
