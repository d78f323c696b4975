"""Hostile input end to end: the fake LLM server, real litellm, the loop, real SQLite.

For each case the turn finishes normally, every tool call is answered by one stored tool
message, what is stored is what the tool returned, and the follow-up request to the model
is valid (it carries every call and every result).
"""

from __future__ import annotations

import json
import os
import sqlite3

from agent.paths import db_path
from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.hostile.conftest import bounded
from tests.loop.conftest import of_type


async def run_turn(server, open_runtime, calls, *, between=(), **step):
    """The model sends `calls` in one message, then answers "noted" (after the `between`
    steps, e.g. a summary when the budget step condenses). Returns the runtime."""
    server.add(tool_calls(calls, **step), *between, text("noted"))
    runtime = await open_runtime(yolo=True)
    try:
        await bounded(runtime.submit(Prompt("go")), 240)
    finally:
        await runtime.close()
    errors = [e.message for e in of_type(runtime.events, "turn_error")]
    assert not errors, errors
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    assert of_type(runtime.events, "assistant_finished")[-1].message.content == "noted"
    return runtime


def stored_results(session_id: str) -> list[tuple[str, str, str]]:
    """(tool_call_id, status, content) of the stored tool messages, in order."""
    with sqlite3.connect(db_path()) as db:
        return db.execute(
            "SELECT tool_call_id, status, content FROM messages WHERE session_id = ? AND role = 'tool' ORDER BY seq",
            (session_id,),
        ).fetchall()


def stored_calls(session_id: str) -> list[dict]:
    with sqlite3.connect(db_path()) as db:
        (raw,) = db.execute(
            "SELECT tool_calls FROM messages WHERE session_id = ? AND role = 'assistant' AND tool_calls IS NOT NULL",
            (session_id,),
        ).fetchone()
    return json.loads(raw)


def followup(server) -> list[dict]:
    """The messages of the request made after the tool results (it must exist and be whole)."""
    assert len(server.requests) == 2
    return server.requests[1]["messages"]


async def test_two_hundred_hostile_calls_in_one_message(server, open_runtime, workspace):
    (workspace / "ok.txt").write_text("fine\n")
    kinds = [
        ("filesystem-read", {"filePath": "ok.txt"}),
        ("filesystem-read", '{"filePath": '),
        ("no-such-tool", {}),
        ("filesystem-edit", {"filePath": 7}),
        ("filesystem-read", {"filePath": "/dev/zero"}),
        ("filesystem-read", "[1, 2]"),
        ("terminal-execute", {"command": ["ls"]}),
        ("context-read", {"id": "art-does-not-exist"}),
    ]
    calls = [(f"call-{i}", *kinds[i % len(kinds)]) for i in range(200)]
    runtime = await run_turn(server, open_runtime, calls, args_chunk_size=1000)
    results = stored_results(runtime.session.id)
    assert [r[0] for r in results] == [c[0] for c in calls]  # one answer per call, in order
    for i, ((_, name, _), (_, status, content)) in enumerate(zip(calls, results, strict=False)):
        if i % len(kinds) == 0:  # the one valid kind
            assert status == "ok" and "1→fine" in content
        else:
            assert status == "error" and content.startswith("Error: "), (name, content[:200])
    sent = followup(server)
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [c[0] for c in calls]
    assert len(sent[-201]["tool_calls"]) == 200


async def test_a_file_name_that_is_not_utf8(server, open_runtime, workspace):
    with open(os.fsencode(str(workspace)) + b"/caf\xe9.txt", "wb") as f:
        f.write(b"hello\n")
    runtime = await run_turn(
        server,
        open_runtime,
        [("c1", "filesystem-read", {"filePath": "."}), ("c2", "filesystem-read", {"filePath": "caf\\xe9.txt"})],
    )
    (_, s1, listing), (_, s2, read) = stored_results(runtime.session.id)
    assert s1 == s2 == "ok" and "caf\\xe9.txt" in listing and "1→hello" in read
    assert "caf\\xe9.txt" in followup(server)[-2]["content"]


async def test_lone_surrogates_from_the_model(server, open_runtime):
    # Valid JSON escapes for lone surrogates: in a path (refused) and in a missing file name.
    runtime = await run_turn(
        server,
        open_runtime,
        [
            ("c1", "filesystem-read", '{"filePath": "a\\ud800.txt"}'),
            ("c2", "filesystem-read", '{"filePath": "b\\udcff.txt"}'),
        ],
    )
    (_, s1, first), (_, s2, second) = stored_results(runtime.session.id)
    assert s1 == s2 == "error"
    assert "not valid Unicode" in first and "File not found: b\\xff.txt" in second
    assert [c["arguments"] for c in stored_calls(runtime.session.id)] == [
        '{"filePath": "a\\ud800.txt"}',
        '{"filePath": "b\\udcff.txt"}',
    ]  # stored as sent


async def test_a_megabyte_argument_is_refused_and_kept(server, open_runtime, workspace):
    path = "p" * (1024 * 1024)
    # ~250k tokens of arguments: over the budget, so the loop condenses before the follow-up.
    runtime = await run_turn(
        server,
        open_runtime,
        [("c1", "filesystem-read", {"filePath": path})],
        between=[text("summary of the session")],
        args_chunk_size=200_000,
    )
    assert len(server.requests) == 3
    ((_, status, content),) = stored_results(runtime.session.id)
    assert status == "error" and "too long" in content and len(content) < 5000
    assert json.loads(stored_calls(runtime.session.id)[0]["arguments"])["filePath"] == path  # nothing lost


async def test_terminal_escapes_binary_and_no_newline(server, open_runtime):
    command = "printf '\\033[2J\\033[H\\033]0;t\\007 \\377\\0 tail'"
    runtime = await run_turn(server, open_runtime, [("c1", "terminal-execute", {"command": command})])
    ((_, status, content),) = stored_results(runtime.session.id)
    assert status == "ok"
    assert json.loads(content)["stdout"] == "\x1b[2J\x1b[H\x1b]0;t\x07 \ufffd\x00 tail"
    assert json.loads(followup(server)[-1]["content"])["exitCode"] == 0


async def test_hostile_tool_names_and_non_object_arguments(server, open_runtime):
    runtime = await run_turn(
        server,
        open_runtime,
        [
            ("c1", "evil\x1b[2J", {}),
            ("c2", "filesystem-read", "null"),
            ("c3", "terminal-execute", '"rm -rf /"'),
        ],
    )
    results = stored_results(runtime.session.id)
    assert [r[1] for r in results] == ["error"] * 3
    assert "unknown tool" in results[0][2] and "must be a JSON object" in results[1][2] + results[2][2]
