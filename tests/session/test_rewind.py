"""Rewind, branches, fork and file checkpoints through a real Runtime (fake LLM server, SQLite)."""

from __future__ import annotations

import contextlib
import sqlite3

from agent.paths import db_path
from agent.runtime.ops import DeleteSession, Export, Fork, NewSession, OpenSession, Prompt, Rename, Rewind, SwitchBranch
from agent.session.models import Message
from tests.fakes.llm_server import text, tool_calls


@contextlib.asynccontextmanager
async def _after_two_turns(server, open_runtime, workspace):
    """A runtime whose session has run both turns of `_two_turns` on app.py (v = 1 → 3)."""
    (workspace / "app.py").write_text("v = 1\n")
    _two_turns(server)
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("first"))
        await runtime.submit(Prompt("second"))
        yield runtime
    finally:
        await runtime.close()


def _two_turns(server):
    """Turn 1 creates notes.txt and edits app.py; turn 2 edits app.py again."""
    server.add(
        tool_calls([("c1", "filesystem-create", {"filePath": "notes.txt", "content": "draft\n"})]),
        tool_calls(
            [("c2", "filesystem-edit", {"filePath": "app.py", "searchContent": "v = 1", "replaceContent": "v = 2"})]
        ),
        text("Turn one done."),
        tool_calls(
            [("c3", "filesystem-edit", {"filePath": "app.py", "searchContent": "v = 2", "replaceContent": "v = 3"})]
        ),
        text("Turn two done."),
    )


async def test_checkpoints_are_recorded_content_addressed(server, open_runtime, workspace):
    async with _after_two_turns(server, open_runtime, workspace) as runtime:
        changes = await runtime.store.file_changes(runtime.session.id)
    assert [(c.path.rsplit("/", 1)[-1], c.before_hash is None) for c in changes] == [
        ("notes.txt", True),
        ("app.py", False),
        ("app.py", False),
    ]
    # The after-bytes of one change are the before-bytes of the next: stored once.
    assert changes[1].after_hash == changes[2].before_hash
    conn = sqlite3.connect(db_path())
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 4  # draft, v=1, v=2, v=3
    # Pre-edit content is not duplicated into the message meta.
    metas = [r[0] or "" for r in conn.execute("SELECT meta FROM messages WHERE role = 'tool'")]
    assert not any('"before"' in m for m in metas)


async def test_rewind_with_files_restores_and_branches(server, open_runtime, workspace):
    (workspace / "app.py").write_text("v = 1\n")
    _two_turns(server)
    server.add(text("A new direction."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("first"))
        await runtime.submit(Prompt("second"))
        old_head = runtime.session.head_id
        points = await runtime.rewind_points()
        assert [p.text for p in points] == ["second", "first"]  # newest first
        assert [p.files_changed for p in points] == [1, 2]
        plan = await runtime.plan_file_restore(points[1].message_id)
        assert [(f.display, f.action) for f in plan] == [("app.py", "restore"), ("notes.txt", "delete")]

        outcome = await runtime.submit(Rewind(points[1].message_id, restore_files=True))
        assert outcome.text == "first"
        assert sorted(outcome.restored + outcome.removed) == ["app.py", "notes.txt"]
        assert (workspace / "app.py").read_text() == "v = 1\n"
        assert not (workspace / "notes.txt").exists()
        assert runtime.session.head_id is None and await runtime.history() == []

        await runtime.submit(Prompt("first, differently"))
        history = await runtime.history()
        assert [m.content for m in history] == ["first, differently", "A new direction."]
        assert server.requests[-1]["messages"][1] == {"role": "user", "content": "first, differently"}

        # The old branch is still stored and can be switched back to.
        branches = await runtime.branches()
        assert [b.leaf_id for b in branches] == [old_head]
        assert branches[0].preview == "second"
        await runtime.submit(SwitchBranch(old_head))
        assert (await runtime.history())[-1].content == "Turn two done."
        assert len(await runtime.store.all_messages(runtime.session.id)) == 12
    finally:
        await runtime.close()


async def test_conversation_only_rewind_leaves_files(server, open_runtime, workspace):
    async with _after_two_turns(server, open_runtime, workspace) as runtime:
        second = (await runtime.rewind_points())[0]
        outcome = await runtime.submit(Rewind(second.message_id, restore_files=False))
        assert outcome.text == "second" and outcome.restored == []
        assert (workspace / "app.py").read_text() == "v = 3\n"
        assert [m.content for m in await runtime.history()][-1] == "Turn one done."


async def test_files_changed_outside_the_agent_are_reported_not_overwritten(server, open_runtime, workspace):
    async with _after_two_turns(server, open_runtime, workspace) as runtime:
        (workspace / "app.py").write_text("v = 3  # my own change\n")
        first = (await runtime.rewind_points())[1]
        plan = {f.display: f.action for f in await runtime.plan_file_restore(first.message_id)}
        assert plan == {"app.py": "conflict", "notes.txt": "delete"}
        outcome = await runtime.submit(Rewind(first.message_id, restore_files=True))
        assert outcome.conflicts == ["app.py"] and outcome.removed == ["notes.txt"]
        assert (workspace / "app.py").read_text() == "v = 3  # my own change\n"


async def test_fork_copies_the_active_path_and_checkpoints(server, open_runtime, workspace):
    async with _after_two_turns(server, open_runtime, workspace) as runtime:
        source = runtime.session
        before = [(m.role, m.content) for m in await runtime.history()]
        fork = await runtime.submit(Fork())
        assert runtime.session.id == fork.id != source.id
        assert fork.parent_session_id == source.id and fork.title == "first (fork)"
        assert [(m.role, m.content) for m in await runtime.history()] == before
        assert len(await runtime.store.file_changes(fork.id)) == 3
        # Rewinding the fork restores files from the copied checkpoints; the source is untouched.
        first = (await runtime.rewind_points())[1]
        await runtime.submit(Rewind(first.message_id, restore_files=True))
        assert (workspace / "app.py").read_text() == "v = 1\n"
        assert (await runtime.store.get_session(source.id)).head_id == source.head_id


async def test_rename_delete_and_list(server, open_runtime):
    server.add(text("hi"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hello there"))
        first = runtime.session
        await runtime.submit(Rename("  My   session "))
        assert runtime.session.title == "My session"
        second = await runtime.submit(NewSession())
        summaries = await runtime.list_sessions()
        assert [s.session.id for s in summaries] == [second.id, first.id]
        assert (summaries[1].first_prompt, summaries[1].message_count, summaries[1].session.title) == (
            "hello there",
            2,
            "My session",
        )
        await runtime.submit(OpenSession(first.id[:8]))
        assert runtime.session.id == first.id and len(await runtime.history()) == 2
        await runtime.submit(DeleteSession(first.id))  # the open one: a fresh session replaces it
        assert runtime.session.id != first.id
        assert first.id not in [s.session.id for s in await runtime.list_sessions()]
        conn = sqlite3.connect(db_path())
        assert conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (first.id,)).fetchone()[0] == 0
    finally:
        await runtime.close()


async def test_export_writes_md_into_the_data_folder_and_jsonl_where_asked(server, open_runtime, workspace):
    server.add(text("Exported answer."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("export me"))
        md = await runtime.submit(Export("md"))
        jsonl = await runtime.submit(Export("jsonl", workspace / "out" / "s.jsonl"))
    finally:
        await runtime.close()
    from agent.paths import data_dir

    assert md == data_dir() / "exports" / f"cairn-{runtime.session.id[:8]}.md"  # not into the repository
    assert not list(workspace.glob("cairn-*"))
    assert "export me" in md.read_text() and "Exported answer." in md.read_text()
    lines = jsonl.read_text().splitlines()
    assert len(lines) == 3 and '"type":"session"' in lines[0]


async def test_history_tail_starts_at_a_whole_exchange(server, open_runtime, workspace):
    async with _after_two_turns(server, open_runtime, workspace) as runtime:
        full = await runtime.history()
        assert await runtime.history_tail(100) == full
        # The newest 6 would start with a tool result whose call is further back: it is left out.
        assert full[-6].role == "tool"
        assert await runtime.history_tail(6) == full[-5:]


def test_a_prompt_restated_after_a_condense_is_one_rewind_point():
    """The unanswered prompt stored again after a summary (agent/context/condense.py) is the
    turn the user typed: the menu lists it once, at the original."""
    from agent.session.rewind import rewind_points

    prompt = Message(role="user", content="now the lexer")
    path = [
        Message(role="user", content="fix the parser"),
        Message(role="assistant", content="Fixed."),
        prompt,
        Message(role="user", content="summary", kind="summary"),
        Message(role="user", content="now the lexer", meta={"restated_from": prompt.id}),
    ]
    points = rewind_points(path, [])
    assert [p.message_id for p in points] == [prompt.id, path[0].id]
