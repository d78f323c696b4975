"""A scripted multi-step task end to end: litellm ↔ fake server, tools on disk, SQLite."""

from __future__ import annotations

import json
import sqlite3

from agent.paths import db_path
from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type


async def test_read_edit_run_answer(server, open_runtime, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    server.add(
        tool_calls([("c1", "filesystem-read", {"filePath": "calc.py"})]),
        tool_calls(
            [("c2", "filesystem-edit", {"filePath": "calc.py", "searchContent": "a - b", "replaceContent": "a + b"})]
        ),
        tool_calls([("c3", "terminal-execute", {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"})]),
        text("Fixed: `add` returns 5 for 2 + 3.", prompt_tokens=1234, completion_tokens=12),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("add is broken, fix it"))
    finally:
        await runtime.close()

    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    assert "".join(e.text for e in of_type(runtime.events, "text_delta")) == "Fixed: `add` returns 5 for 2 + 3."

    # Every message is in SQLite, chained by parent_id, in order.
    conn = sqlite3.connect(db_path())
    rows = conn.execute(
        "SELECT id, parent_id, role, tool_call_id, status, content FROM messages ORDER BY seq"
    ).fetchall()
    assert [r[2] for r in rows] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]
    assert rows[0][1] is None
    for prev, cur in zip(rows, rows[1:], strict=False):
        assert cur[1] == prev[0]
    assert all(r[4] == "ok" for r in rows)
    assert json.loads(rows[6][5])["stdout"] == "5\n"
    head = conn.execute("SELECT head_id, title FROM sessions").fetchone()
    assert head == (rows[-1][0], "add is broken, fix it")

    # The requests really went through the pipeline: system prompt, tools, results after calls.
    last = server.requests[-1]
    assert last["messages"][0]["role"] == "system"
    assert {t["function"]["name"] for t in last["tools"]} >= {
        "filesystem-read",
        "filesystem-edit",
        "filesystem-create",
        "terminal-execute",
    }
    roles = [m["role"] for m in last["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    # Reported usage is stored beside our tiktoken estimate.
    final = conn.execute("SELECT meta FROM messages WHERE seq = 8").fetchone()[0]
    meta = json.loads(final)
    assert meta["usage"]["prompt_tokens"] == 1234 and meta["estimated_prompt_tokens"] > 0


async def test_agents_md_goes_into_the_system_prompt(server, open_runtime, workspace):
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    server.add(text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert "Always answer in haiku." in server.requests[0]["messages"][0]["content"]


async def test_resume_continues_the_same_session(server, open_runtime):
    server.add(text("first answer"), text("second answer"))
    first = await open_runtime()
    await first.submit(Prompt("one"))
    await first.close()
    second = await open_runtime(continue_last=True)
    try:
        assert second.session.id == first.session.id
        await second.submit(Prompt("two"))
        history = await second.history()
    finally:
        await second.close()
    assert [m.content for m in history] == ["one", "first answer", "two", "second answer"]
    assert [m["content"] for m in server.requests[1]["messages"][1:]] == ["one", "first answer", "two"]


async def test_the_loaded_backend_is_kept_out_of_the_collectors_walks(open_runtime):
    """After litellm loads, its objects are frozen and full collections are rarer: a full
    collection blocked a fast stream's screen for ~60-90 ms every second (bench/streaming.py)."""
    import gc

    from agent.runtime.backend_load import GC_OLD_THRESHOLD, GC_YOUNG_THRESHOLD

    runtime = await open_runtime()
    try:
        await runtime.ready()
        assert gc.get_freeze_count() > 100_000
        assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD and gc.get_threshold()[2] == GC_OLD_THRESHOLD
    finally:
        await runtime.close()
