"""A subagent's session after the fact: listed under its parent, exported and imported with it,
kept by a rewind of the parent; its cost is the parent's; an interrupt stops it; its approvals
name it."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent.runtime.ops import Prompt
from agent.session.export import export_jsonl, export_markdown
from agent.session.importers import import_session, parse_any
from agent.session.store import Store
from tests.fakes.llm_server import hang, text, tool_calls
from tests.loop.conftest import of_type
from tests.subagents.test_subagent_e2e import PARENT, _in
from tests.test_cli import CAIRN, run

TASK = "Summarise notes.txt"


async def _parent_with_one_child(server, open_runtime, workspace, **kwargs):
    (workspace / "notes.txt").write_text("the notes\n")
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "explore", "task": TASK})])),
        _in(TASK, tool_calls([("r1", "filesystem-read", {"filePath": "notes.txt"})])),
        _in(TASK, text("notes.txt says: the notes", prompt_tokens=1000, completion_tokens=100)),
        _in(PARENT, text("Summarised.")),
    )
    runtime = await open_runtime(**kwargs)
    try:
        await runtime.submit(Prompt(PARENT))
        children = await runtime.subagents()
        transcript = await runtime.subagent_transcript(children[0].id)
        cost = runtime.agent.session_cost
    finally:
        await runtime.close()
    return runtime, children, transcript, cost


async def test_the_child_is_exported_and_imported_with_its_parent(server, open_runtime, workspace):
    runtime, children, transcript, _ = await _parent_with_one_child(server, open_runtime, workspace)
    assert "notes.txt says: the notes" in transcript and TASK in transcript
    store = await Store.open()
    try:
        parent = await store.get_session(children[0].parent_session_id)
        child_messages = await store.all_messages(children[0].id)
        text_out = export_jsonl(parent, await store.all_messages(parent.id), subagents=[(children[0], child_messages)])
        record = [json.loads(line) for line in text_out.splitlines() if '"type":"subagent"' in line]
        assert len(record) == 1 and record[0]["session"]["agent"] == "explore"
        assert [m["role"] for m in record[0]["messages"]] == ["user", "assistant", "tool", "assistant"]
        markdown = export_markdown(parent, await store.active_path(parent.id), [(children[0], child_messages)])
        assert "# Subagent: explore:" in markdown and "notes.txt says: the notes" in markdown

        # Imported into the same database: new ids, and the child hangs under the new parent.
        imported = await import_session(store, parse_any(text_out, "auto"), cwd_default=str(workspace))
        assert imported.id != parent.id
        again = await store.subagent_sessions(imported.id)
        assert [(c.agent, c.parent_call_id) for c in again] == [("explore", "s1")]
        assert [m.content for m in await store.active_path(again[0].id)][-1] == "notes.txt says: the notes"
        # The exported file round-trips byte for byte into a fresh database too (ids free there).
        assert (
            export_jsonl(
                imported,
                await store.all_messages(imported.id),
                subagents=[(again[0], await store.all_messages(again[0].id))],
            ).count('"type":"subagent"')
            == 1
        )
    finally:
        await store.close()


@pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
async def test_session_list_shows_the_child_under_its_parent(server, open_runtime, workspace):
    _, children, _, _ = await _parent_with_one_child(server, open_runtime, workspace)
    out = run("session", "list")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    parent_line = next(i for i, line in enumerate(lines) if line.startswith(children[0].parent_session_id))
    assert lines[parent_line + 1].lstrip().startswith(f"└ {children[0].id}")
    listed = json.loads(run("session", "list", "--json").stdout)
    assert [(r["agent"], r["parent_session_id"]) for r in listed] == [
        (None, None),
        ("explore", children[0].parent_session_id),
    ]
    exported = run("session", "export", children[0].parent_session_id, "--format", "md")
    assert "# Subagent: explore:" in exported.stdout


async def test_rewinding_the_parent_keeps_the_child(server, open_runtime, workspace):
    runtime, children, _, _ = await _parent_with_one_child(server, open_runtime, workspace)
    store = await Store.open()
    try:
        parent = await store.get_session(children[0].parent_session_id)
        await store.set_head(parent, None)  # rewound to before the first prompt
        assert [c.id for c in await store.subagent_sessions(parent.id)] == [children[0].id]
        assert len(await store.active_path(children[0].id)) == 4
    finally:
        await store.close()


async def test_the_childs_cost_is_the_parents(server, open_runtime, workspace):
    # A model with a price (the fake server answers for any name).
    _, children, _, cost = await _parent_with_one_child(
        server, open_runtime, workspace, flags={"model": "openai/gpt-4o-mini"}
    )
    store = await Store.open()
    try:
        child_messages = await store.all_messages(children[0].id)
        parent_path = await store.active_path(children[0].parent_session_id)
    finally:
        await store.close()
    child_cost = sum(float(m.meta.get("cost") or 0) for m in child_messages)
    child_prompt = sum(m.meta["usage"]["prompt_tokens"] for m in child_messages if m.role == "assistant")
    result = next(m for m in parent_path if m.role == "tool")
    own = sum(float(m.meta.get("cost") or 0) for m in parent_path if m.role == "assistant")
    assert child_cost > 0 and own > 0
    assert result.meta["cost"] == pytest.approx(child_cost)
    assert result.meta["subagent"]["prompt_tokens"] == child_prompt >= 1000
    assert cost == pytest.approx(own + child_cost)  # the session's running total, as the status bar shows it


async def _child_is_answering(runtime) -> bool:
    children = await runtime.subagents()
    if not children:
        return False
    path = await runtime.store.active_path(children[0].id)
    return bool(path) and path[-1].role == "assistant" and bool(path[-1].content)


async def test_an_interrupt_stops_the_child_and_keeps_both_histories_valid(server, open_runtime, workspace):
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "explore", "task": TASK})])),
        _in(TASK, hang(60, "working on it")),
    )
    runtime = await open_runtime()
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt(PARENT)))
        while not any(e.type == "tool_started" for e in runtime.events) or len(server.requests) < 2:
            await asyncio.sleep(0.02)
        # The child's first words have arrived (stored as it streams), not only its request.
        while not await _child_is_answering(runtime):
            await asyncio.sleep(0.02)
        turn.cancel()
        await asyncio.gather(turn, return_exceptions=True)
        children = await runtime.subagents()
    finally:
        await runtime.close()
    assert of_type(runtime.events, "turn_finished")[-1].status == "interrupted"
    store = await Store.open()
    try:
        parent_path = await store.active_path(children[0].parent_session_id)
        child_path = await store.active_path(children[0].id)
    finally:
        await store.close()
    assert parent_path[-1].role == "tool" and parent_path[-1].meta.get("interrupted")
    assert child_path[-1].role == "assistant" and child_path[-1].status == "interrupted"
    assert child_path[-1].content == "working on it"


async def test_a_childs_approval_is_asked_in_the_parents_ui_naming_the_agent(server, open_runtime, workspace):
    asked = []

    async def approver(request):
        asked.append(request)
        return "deny"

    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "general", "task": TASK})])),
        _in(TASK, tool_calls([("t1", "terminal-execute", {"command": "touch made.txt"})])),
        _in(TASK, text("The user said no.")),
        _in(PARENT, text("ok")),
    )
    runtime = await open_runtime(yolo=False, approver=approver)
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    [title] = [r.title for r in asked]  # which task asks: two children at once are told apart
    assert title.startswith(f"[general agent: {TASK[:20]}") and title.endswith("] Run command")
    assert not (workspace / "made.txt").exists()


async def test_continue_and_the_first_screen_skip_a_child_written_last(server, open_runtime, workspace):
    from agent.paths import db_path
    from agent.session.models import Message
    from agent.session.peek import peek_tail

    _, children, _, _ = await _parent_with_one_child(server, open_runtime, workspace)
    store = await Store.open()
    try:
        child = await store.get_session(children[0].id)
        await store.append(child, Message(role="user", content="written last"))  # the newest row is the child's
        latest = await store.latest_session(child.cwd, with_messages=True)
    finally:
        await store.close()
    assert latest.id == children[0].parent_session_id
    shown = peek_tail(db_path(), cwd=child.cwd)
    assert shown is not None and shown[-1]["content"] == "Summarised."
