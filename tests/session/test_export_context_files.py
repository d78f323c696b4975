"""Seed 004 备份/导入 (issue 17, seed gap 2): `cairn session export` / `import` carry the
session's context files, and a history ref whose file is missing is rebuilt from the store.

Seed 004: "备份/导入：导出会话时包含其上下文文件（context/<session>/**，含历史归档）；导入时恢复，
可由 SQLite 重建的文件缺失时重建" — the export must carry the context files, history
archives included, and what can be rebuilt from the store is rebuilt when missing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from agent.context import condense_prompt
from agent.context.files import manifest
from agent.context.files.manager import ContextFiles
from agent.context.files.refs import history_ref_id
from agent.runtime.ops import Export
from agent.session import cli as session_cli
from agent.session.models import Message, ToolCall
from agent.session.store import Store
from agent.settings.schema import Settings

NEEDLE = "step 20000: FAILED with NEEDLE-4242"
LOG = "".join(f"step {i}: ok\n" for i in range(20_000)) + NEEDLE + "\n"


def _files(store, session_id) -> ContextFiles:
    return ContextFiles(store, session_id, settings=Settings().context)  # <CAIRN_HOME>/context


async def _condensed_session(workspace: Path):
    """A session with an externalised terminal output and a condense summary whose history
    archive was written the way agent/turn/budget_step.py writes it."""
    store = await Store.open()
    session = await store.create_session(cwd=str(workspace), model="openai/fake", title="ctx files")
    u = await store.append(session, Message(role="user", content="build it, the secret word is PLUM-77"))
    call = ToolCall(id="c1", name="terminal-execute", arguments=json.dumps({"command": "make"}))
    a = await store.append(session, Message(role="assistant", tool_calls=[call]))
    t = await store.append(
        session,
        Message(
            role="tool",
            tool_call_id="c1",
            tool_name="terminal-execute",
            content=json.dumps({"command": "make", "stdout": LOG, "stderr": "", "exitCode": 2}),
        ),
    )
    e = await store.append(session, Message(role="assistant", content="The build failed at step 20000."))
    replaced = [u, a, t, e]
    ref = history_ref_id(u.id, e.id)
    summary = Message(
        role="user",
        kind="summary",
        parent_id=e.id,
        created_at=e.created_at + 1,
        content=condense_prompt.summary_content(
            "We built; it failed.", ref=ref, kept=[], blocks=[], folded="", environment=""
        ),
        meta={"condensed": {"first_id": u.id, "last_id": e.id, "count": len(replaced)}},
    )
    summary = await store.append(session, summary)
    await store.mark_condensed([m.id for m in replaced], summary.id)
    files = _files(store, session.id)
    when = datetime.fromtimestamp(summary.created_at / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    await files.add_history(
        u.id,
        e.id,
        condense_prompt.history_markdown(replaced, workspace=workspace, now_ms=summary.created_at),
        hint=f"conversation archive: {len(replaced)} messages condensed {when}",
    )
    [art] = await files.list(kind="artifact")
    await files.tail(art.id, lines=1)  # the artifact's file exists (built lazily on first use)
    return store, session, ref, art.id


async def _export(session_id: str, out: Path, workspace: Path) -> str:
    args = argparse.Namespace(session_command="export", session_id=session_id, format="jsonl", output=str(out))
    assert await session_cli._run(args, workspace) == 0
    return out.read_text("utf-8")


async def _import(path: Path, workspace: Path, capsys) -> str:
    args = argparse.Namespace(session_command="import", file=str(path), format="auto", json=True)
    capsys.readouterr()
    assert await session_cli._run(args, workspace) == 0
    return json.loads(capsys.readouterr().out.splitlines()[-1])["session_id"]


async def _views(files: ContextFiles, ids: list[str]) -> dict:
    out = {}
    for ref_id in ids:
        page = await files.read(ref_id, limit=10_000_000)
        grep = await files.grep(ref_id, "needle-\\d+|PLUM-\\d+", context_lines=1)
        out[ref_id] = (page.content, page.byteSize, grep.model_dump())
    return out


def _listing(refs) -> list:
    return sorted((r.id, r.kind, r.byteSize, r.createdAt, r.hint) for r in refs)


async def test_export_import_carries_history_and_artifacts_and_round_trips(tmp_path, monkeypatch, capsys, workspace):
    store, session, hist, art = await _condensed_session(workspace)
    try:
        files = _files(store, session.id)
        before_list = _listing(await files.list())
        before = await _views(files, [hist, art])
    finally:
        await store.close()
    assert {r[0] for r in before_list} == {hist, art}
    assert "PLUM-77" in before[hist][0] and before[art][2]["totalMatches"] == 1

    exported = await _export(session.id, tmp_path / "s.jsonl", workspace)
    records = [json.loads(line) for line in exported.splitlines()]
    carried = {r["id"]: r for r in records if r["type"] == "context-file"}
    assert set(carried) == {hist, art}
    assert carried[hist]["kind"] == "history" and "PLUM-77" in carried[hist]["content"]
    assert carried[hist]["sha256"] == hashlib.sha256(carried[hist]["content"].encode()).hexdigest()

    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "elsewhere"))  # another machine
    new_id = await _import(tmp_path / "s.jsonl", workspace, capsys)
    there = await Store.open()
    try:
        files = _files(there, new_id)
        assert _listing(await files.list()) == before_list
        assert await _views(files, [hist, art]) == before
        # The summary names the ref, and context-read finds it.
        [summary] = [m for m in await there.all_messages(new_id) if m.kind == "summary"]
        assert hist in summary.content
    finally:
        await there.close()

    again = await _export(new_id, tmp_path / "again.jsonl", workspace)
    assert again == exported  # export → import → export is exact, context files included


async def test_a_deleted_history_file_is_rebuilt_from_the_store_on_read(tmp_path, workspace):
    store, session, hist, _ = await _condensed_session(workspace)
    try:
        files = _files(store, session.id)
        original = (await files.read(hist, limit=10_000_000)).content
        (files.folder / manifest.load(files.folder)["entries"][hist]["path"]).unlink()
        page = await files.read(hist, limit=10_000_000)
        assert page.content == original and "PLUM-77" in page.content
        assert (await files.grep(hist, "plum-\\d+")).totalMatches >= 1
        # Even with its manifest entry gone, the id the summary names resolves.
        (files.folder / manifest.MANIFEST).unlink()
        assert (await files.read(hist, limit=10_000_000)).content == original
        assert hist in {r.id for r in await files.list(kind="history")}
    finally:
        await store.close()


async def test_an_old_export_without_context_files_still_imports(tmp_path, monkeypatch, capsys, workspace):
    store, session, hist, art = await _condensed_session(workspace)
    try:
        files = _files(store, session.id)
        expected = await _views(files, [hist, art])
    finally:
        await store.close()
    exported = await _export(session.id, tmp_path / "s.jsonl", workspace)
    old = "".join(line + "\n" for line in exported.splitlines() if json.loads(line)["type"] != "context-file")
    (tmp_path / "old.jsonl").write_text(old, "utf-8")

    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "elsewhere"))
    new_id = await _import(tmp_path / "old.jsonl", workspace, capsys)
    there = await Store.open()
    try:
        files = _files(there, new_id)
        # The summary's hist-… id is rebuilt from the imported messages, the artifact too.
        assert await _views(files, [hist, art]) == expected
    finally:
        await there.close()


async def test_a_tampered_history_file_is_rebuilt_and_paths_stay_inside_the_folder(
    tmp_path, monkeypatch, capsys, workspace
):
    store, session, hist, art = await _condensed_session(workspace)
    try:
        expected = await _views(_files(store, session.id), [hist])
    finally:
        await store.close()
    exported = await _export(session.id, tmp_path / "s.jsonl", workspace)
    lines = []
    for line in exported.splitlines():
        record = json.loads(line)
        if record.get("id") == hist:
            record["content"] = record["content"].replace("PLUM-77", "PEAR-00")  # sha256 no longer matches
        if record.get("id") == art:
            record["path"] = "../../escaped.txt"
        lines.append(json.dumps(record))
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", "utf-8")

    home = tmp_path / "elsewhere"
    monkeypatch.setenv("CAIRN_HOME", str(home))
    new_id = await _import(tmp_path / "bad.jsonl", workspace, capsys)
    there = await Store.open()
    try:
        assert await _views(_files(there, new_id), [hist]) == expected
    finally:
        await there.close()
    assert not any(re.search("escaped", str(p)) for p in tmp_path.rglob("*"))


async def test_export_from_the_app_writes_what_the_cli_writes(tmp_path, workspace, open_runtime):
    """`/export jsonl` carried no context files (the CLI built them, the runtime did not):
    both now read the session through agent/session/exporting.py, so the files are the same."""
    store, session, hist, art = await _condensed_session(workspace)
    await store.close()
    from_cli = await _export(session.id, tmp_path / "cli.jsonl", workspace)

    runtime = await open_runtime(resume_id=session.id)
    try:
        target = await runtime.submit(Export("jsonl", tmp_path / "app.jsonl"))
    finally:
        await runtime.close()
    from_app = target.read_text("utf-8")
    assert {r["id"] for r in map(json.loads, from_app.splitlines()) if r["type"] == "context-file"} == {hist, art}
    assert from_app == from_cli
