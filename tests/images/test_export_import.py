"""Attached images leave and come back with the session: the JSONL export carries each blob
(base64, checked against its hash on import), the round trip is byte-exact, and deleting a
session never takes an image another session still names."""

from __future__ import annotations

import json

import pytest

from agent.runtime.ops import Export, Prompt
from agent.session.models import Message
from agent.session.store import Store
from tests.fakes.llm_server import text
from tests.images.fixtures import gif, png
from tests.test_cli import CAIRN, run


async def _session_with_images(server, open_runtime) -> tuple[str, bytes, bytes]:
    first, second = png(6, 5, seed=3), gif(7, 6)
    (open_runtime.workspace / "one.png").write_bytes(first)
    (open_runtime.workspace / "two.gif").write_bytes(second)
    server.add(text("seen"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("compare @one.png with @two.gif"))
        return runtime.session.id, first, second
    finally:
        await runtime.close()


def _ok(out) -> str:
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
async def test_cli_export_import_round_trip_is_exact(server, open_runtime, tmp_path):
    session_id, first, second = await _session_with_images(server, open_runtime)
    exported = tmp_path / "s.jsonl"
    _ok(run("session", "export", session_id, "-o", str(exported)))
    lines = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    images = [r for r in lines if r["type"] == "image"]
    assert sorted(r["size"] for r in images) == sorted([len(first), len(second)])

    store = await Store.open()
    try:
        await store.delete_session(session_id)
        assert all([await store.get_blob(r["hash"]) is None for r in images])  # nothing else names them
    finally:
        await store.close()
    assert _ok(run("session", "import", str(exported), "--format", "cairn")).strip() == session_id
    assert _ok(run("session", "export", session_id)) == exported.read_text(encoding="utf-8")
    store = await Store.open()
    try:
        blobs = {await store.get_blob(r["hash"]) for r in images}
    finally:
        await store.close()
    assert blobs == {first, second}


@pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
async def test_an_image_line_that_does_not_match_its_hash_is_refused(server, open_runtime, tmp_path):
    session_id, _, _ = await _session_with_images(server, open_runtime)
    exported = tmp_path / "s.jsonl"
    _ok(run("session", "export", session_id, "-o", str(exported)))
    records = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record["type"] == "image":
            record["content"] = record["content"][:-8] + "AAAAAAAA"
    exported.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = run("session", "import", str(exported), "--format", "cairn")
    assert out.returncode != 0 and "not matching its hash" in out.stderr


async def test_runtime_export_carries_the_images(server, open_runtime):
    session_id, first, _ = await _session_with_images(server, open_runtime)
    runtime = await open_runtime(resume_id=session_id)
    try:
        target = await runtime.submit(Export("jsonl"))
    finally:
        await runtime.close()
    records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [r["mime"] for r in records if r["type"] == "image"] != []
    assert any(r.get("size") == len(first) for r in records if r["type"] == "image")


async def test_deleting_a_session_keeps_the_images_other_sessions_name(tmp_path):
    store = await Store.open(tmp_path / "s.db")
    try:
        [digest] = await store.put_blobs([png()])
        meta = {"images": [{"hash": digest, "name": "a.png", "mime": "image/png", "width": 3, "height": 2}]}
        one = await store.create_session(cwd="/w")
        two = await store.create_session(cwd="/w")
        await store.append(one, Message(role="user", content="a", meta=meta))
        await store.append(two, Message(role="user", content="b", meta=meta))
        await store.delete_session(one.id)
        assert await store.get_blob(digest) == png()
        await store.delete_session(two.id)
        assert await store.get_blob(digest) is None
    finally:
        await store.close()
