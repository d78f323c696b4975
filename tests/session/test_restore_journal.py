"""Rewind's file restore is journaled and a leftover journal is rolled forward at open.

The kill -9 harness (test_kill9_harness.py) kills real processes mid-restore; these tests
build the half-done states deterministically: a journal written from the real plan, part
of it applied, its owner "dead" (lock released), then a fresh `Runtime.open`.
"""

from __future__ import annotations

import asyncio
import json

from agent.paths import data_dir
from agent.runtime.ops import Prompt, Rewind
from agent.session import restore_journal
from agent.session.restore_journal import (
    PAUSE_ENV,
    PREFIX,
    Journal,
    journal_dir,
    recover,
    restore_file,
    temp_path,
    write_journal,
)
from agent.session.rewind import journal_entry
from agent.session.store import Store
from tests.fakes.llm_server import text, tool_calls


def _journals() -> list:
    return sorted(p for p in data_dir().iterdir() if p.name.startswith(PREFIX))


async def _two_turns(server, open_runtime, workspace):
    """Turn 1 creates notes.txt and edits app.py (v = 1 → 2); turn 2 edits app.py (→ 3) and
    creates todo.txt. Returns the open runtime and the first turn's id."""
    (workspace / "app.py").write_text("v = 1\n")
    server.add(
        tool_calls([("c1", "filesystem-create", {"filePath": "notes.txt", "content": "draft\n"})]),
        tool_calls(
            [("c2", "filesystem-edit", {"filePath": "app.py", "searchContent": "v = 1", "replaceContent": "v = 2"})]
        ),
        text("Turn one done."),
        tool_calls(
            [
                ("c3", "filesystem-edit", {"filePath": "app.py", "searchContent": "v = 2", "replaceContent": "v = 3"}),
                ("c4", "filesystem-create", {"filePath": "todo.txt", "content": "later\n"}),
            ]
        ),
        text("Turn two done."),
    )
    runtime = await open_runtime()
    await runtime.submit(Prompt("first"))
    await runtime.submit(Prompt("second"))
    first = (await runtime.rewind_points())[1]
    assert first.text == "first"
    return runtime, first.message_id


async def _half_done(runtime, message_id, applied: int):
    """What a process killed mid-restore leaves: the journal, `applied` files written, the
    head not moved, and the journal's lock gone with the process."""
    plan = await runtime.plan_file_restore(message_id)
    target = await runtime.store.get_message(message_id)
    journal = Journal(
        session_id=runtime.session.id,
        from_head=runtime.session.head_id,
        to_head=target.parent_id,
        entries=[journal_entry(item) for item in plan],
    )
    handle = write_journal(journal_dir(runtime.store), journal)
    for entry in journal.entries[:applied]:
        assert await restore_file(runtime.store, entry) in ("restored", "removed")
    handle.release()
    return journal


async def test_live_rewind_writes_the_journal_first_and_removes_it_after(server, open_runtime, workspace, monkeypatch):
    runtime, first = await _two_turns(server, open_runtime, workspace)
    try:
        monkeypatch.setenv(PAUSE_ENV, "0.3")  # before each file: time to look at the journal
        rewinding = asyncio.ensure_future(runtime.submit(Rewind(first, restore_files=True)))
        while not _journals() and not rewinding.done():
            await asyncio.sleep(0.005)
        [path] = _journals()
        journal = json.loads(path.read_text())
        assert journal["session_id"] == runtime.session.id and journal["to_head"] is None
        assert journal["from_head"] == runtime.session.head_id
        entries = {e["path"].rsplit("/", 1)[-1]: e for e in journal["entries"]}
        assert sorted(entries) == ["app.py", "notes.txt", "todo.txt"]
        assert entries["notes.txt"]["target_hash"] is None and entries["todo.txt"]["target_hash"] is None
        assert entries["app.py"]["target_hash"] is not None
        assert all(e["original_hash"] for e in entries.values())  # each file's bytes when planned
        outcome = await rewinding
        assert sorted(outcome.restored + outcome.removed) == ["app.py", "notes.txt", "todo.txt"]
        assert _journals() == []
        assert (workspace / "app.py").read_text() == "v = 1\n"
        assert runtime.session.head_id is None
    finally:
        await runtime.close()


async def test_leftover_journal_is_rolled_forward_at_open(server, open_runtime, workspace):
    runtime, first = await _two_turns(server, open_runtime, workspace)
    session_id, old_head = runtime.session.id, runtime.session.head_id
    journal = await _half_done(runtime, first, applied=1)
    # A write cut short by the kill leaves its temp file next to the target.
    stray = temp_path(workspace / "todo.txt")
    stray.write_bytes(b"half")
    await runtime.close()
    # Half done: app.py (first in the plan) is back, the two created files are still there.
    assert [e.display for e in journal.entries] == ["app.py", "notes.txt", "todo.txt"]
    assert _journals() and (workspace / "app.py").read_text() == "v = 1\n"
    assert (workspace / "notes.txt").exists() and (workspace / "todo.txt").exists()

    runtime = await open_runtime(continue_last=True)
    try:
        assert _journals() == [] and not stray.exists()
        assert (workspace / "app.py").read_text() == "v = 1\n"
        assert not (workspace / "notes.txt").exists() and not (workspace / "todo.txt").exists()
        assert runtime.session.id == session_id and runtime.session.head_id is None
        [recovered] = runtime.recovered
        assert recovered.head_moved and recovered.conflicts == []
        assert len(recovered.restored + recovered.removed) == 2  # the first file was already done
        assert recovered.describe().startswith("Finished a file restore") and "(2 files)" in recovered.describe()
        # Nothing was deleted: the rewound branch is still stored.
        assert [b.leaf_id for b in await runtime.branches()] == [old_head]
    finally:
        await runtime.close()


async def test_roll_forward_leaves_files_changed_since_and_a_moved_head(server, open_runtime, workspace):
    runtime, first = await _two_turns(server, open_runtime, workspace)
    await _half_done(runtime, first, applied=0)
    # After the kill, someone edits a file and another process continues the session.
    (workspace / "app.py").write_text("v = 3  # mine\n")
    server.add(text("Continued elsewhere."))
    await runtime.submit(Prompt("meanwhile"))
    head = runtime.session.head_id
    await runtime.close()

    runtime = await open_runtime(continue_last=True)
    try:
        [recovered] = runtime.recovered
        assert [c.rsplit("/", 1)[-1] for c in recovered.conflicts] == ["app.py"]
        assert "left alone because they changed since" in recovered.describe()
        assert (workspace / "app.py").read_text() == "v = 3  # mine\n"
        assert not (workspace / "notes.txt").exists() and not (workspace / "todo.txt").exists()
        assert not recovered.head_moved and runtime.session.head_id == head
        assert (await runtime.history())[-1].content == "Continued elsewhere."
        assert _journals() == []
    finally:
        await runtime.close()


async def test_rolling_forward_twice_changes_nothing_more(server, open_runtime, workspace):
    runtime, first = await _two_turns(server, open_runtime, workspace)
    journal = await _half_done(runtime, first, applied=3)  # killed after the files, before the head
    store = runtime.store
    [once] = await recover(store)
    assert once.head_moved and once.restored == once.removed == []
    # The same journal found again (e.g. a crash before its removal reached the disk).
    write_journal(journal_dir(store), journal).release()
    [again] = await recover(store)
    assert not again.head_moved and again.conflicts == [] and again.restored == again.removed == []
    assert (workspace / "app.py").read_text() == "v = 1\n"
    assert (await store.get_session(journal.session_id)).head_id is None
    await runtime.close()


async def _held_journal(runtime, first):
    plan = await runtime.plan_file_restore(first)
    journal = Journal(
        session_id=runtime.session.id,
        from_head=runtime.session.head_id,
        to_head=None,
        entries=[journal_entry(item) for item in plan],
    )
    return write_journal(journal_dir(runtime.store), journal)  # held: the owner is mid-restore


async def test_a_journal_whose_owner_stays_alive_is_left_to_it(server, open_runtime, workspace):
    runtime, first = await _two_turns(server, open_runtime, workspace)
    handle = await _held_journal(runtime, first)
    other = await Store.open(runtime.store.path)
    try:
        assert await recover(other, wait=0.1) == []
        assert _journals() == [handle.path] and (workspace / "app.py").read_text() == "v = 3\n"
        handle.release()  # the owner died
        [recovered] = await recover(other)
        assert recovered.head_moved and (workspace / "app.py").read_text() == "v = 1\n"
    finally:
        handle.release()
        await other.close()
        await runtime.close()


async def test_start_up_waits_for_a_live_restore_to_finish(server, open_runtime, workspace, monkeypatch):
    """Another process opening meanwhile must not read the session while files are half
    restored (it would continue from the old head and the restore could not move it)."""
    runtime, first = await _two_turns(server, open_runtime, workspace)
    handle = await _held_journal(runtime, first)
    other = await Store.open(runtime.store.path)
    # Count the recovery's attempts on the owner's lock: two refused attempts prove it kept
    # waiting after the first (an event, not a fixed sleep that a slow machine makes vacuous).
    refused = asyncio.Event()
    attempts: list[bool] = []

    def counting_lock(fd: int, *, wait: bool) -> bool:
        got = real_lock(fd, wait=wait)
        attempts.append(got)
        if attempts.count(False) >= 2:
            refused.set()
        return got

    real_lock = restore_journal._lock
    monkeypatch.setattr(restore_journal, "_lock", counting_lock)
    try:
        recovering = asyncio.ensure_future(recover(other, wait=120))  # a hang guard; the owner ends it
        await asyncio.wait_for(refused.wait(), 60)
        assert not recovering.done()  # still waiting on the owner's lock
        for entry in handle.journal.entries:  # the owner finishes its restore
            await restore_file(runtime.store, entry)
        await runtime.store.set_head(runtime.session, None)
        handle.finish()
        assert await recovering == []  # nothing left to do, nothing done twice
        assert (workspace / "app.py").read_text() == "v = 1\n" and _journals() == []
    finally:
        handle.release()
        await other.close()
        await runtime.close()


async def test_unreadable_and_unfinished_journals_are_cleared(tmp_path):
    store = await Store.open(tmp_path / "s.db")
    try:
        (tmp_path / f"{PREFIX}abc-1.json").write_text('{"session_id": "abc", "entr')  # not a journal
        (tmp_path / f"{PREFIX}abc-2.json.tmp").write_text("{")  # died before the final name
        assert await recover(store) == []
        assert not any(p.name.startswith(PREFIX) for p in tmp_path.iterdir())
    finally:
        await store.close()
