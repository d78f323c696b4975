"""An id can never reach outside its session's folder (seed 004, "安全边界")."""

from __future__ import annotations

import json
import os

import pytest

from agent.context.files import manifest, security
from agent.context.files.manager import ContextFileError, ContextFiles
from agent.context.files.refs import artifact_ref_id, history_ref_id
from tests.context.files.test_manager import BIG, add_result, file_of, files_for

SECRET = "top secret outside the session folder\n"


@pytest.fixture
def outside(tmp_path):
    path = tmp_path / "outside.txt"
    path.write_text(SECRET * 400)
    return path


async def _session_with_artifact(store, tmp_path):
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "x", {}, "inside\n" * BIG)
    return session, files_for(store, session, tmp_path), artifact_ref_id(message.id)


async def _each_operation(files: ContextFiles, ref_id):
    """Yield the outcome of read, tail and grep (an exception is an outcome)."""
    for op in (lambda: files.read(ref_id), lambda: files.tail(ref_id), lambda: files.grep(ref_id, "secret")):
        try:
            yield await op()
        except ContextFileError as exc:
            yield exc


BAD_IDS = [
    "",
    "art-",
    "art-XYZ",
    "art-0123456789ABCDEF",
    "../x",
    "../../etc/passwd",
    "/etc/passwd",
    "art-0123456789abcdef\0",
    "art-0123456789abcdef/../../x",
    "art-0123456789abcdef\n",
    "a" * 100_000,
    "hist-../../../etc",
    "cat-",
    "file:///etc/passwd",
    "artifacts/tool/c1.txt",
    "manifest.json",
]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_malformed_ids_are_unknown(store, tmp_path, bad):
    _, files, _ = await _session_with_artifact(store, tmp_path)
    async for outcome in _each_operation(files, bad):
        assert isinstance(outcome, ContextFileError) and "unknown context id" in str(outcome)
        assert len(str(outcome)) < 200  # a huge id is not echoed back whole


async def test_ids_of_another_session_are_unknown_here(store, tmp_path):
    _, mine, _ = await _session_with_artifact(store, tmp_path)
    other_session, other, other_ref = await _session_with_artifact(store, tmp_path)
    assert (await other.read(other_ref)).content.startswith("inside")  # valid there …
    history = await other.add_history("m1", "m2", "their history\n", hint="theirs")
    for ref in (other_ref, history.id, artifact_ref_id("no-such-message"), history_ref_id("m1", "m2")):
        async for outcome in _each_operation(mine, ref):  # … unknown here
            assert isinstance(outcome, ContextFileError) and "unknown context id" in str(outcome)


async def test_a_tampered_manifest_cannot_point_outside(store, tmp_path, outside):
    _, files, _ = await _session_with_artifact(store, tmp_path)
    ref = await files.add_history("a", "b", "mine\n", hint="h")
    for path in ("../../outside.txt", str(outside), "history/../../../outside.txt", "history/\0x", ""):
        data = manifest.load(files.folder)
        data["entries"][ref.id]["path"] = path
        manifest.save(files.folder, data)
        async for outcome in _each_operation(files, ref.id):
            assert isinstance(outcome, ContextFileError) and "refusing" in str(outcome)


async def test_a_planted_symlink_to_a_file_outside_is_refused(store, tmp_path, outside):
    _, files, ref = await _session_with_artifact(store, tmp_path)
    await files.read(ref)
    path = file_of(files, ref)
    path.unlink()
    path.symlink_to(outside)
    async for outcome in _each_operation(files, ref):
        assert isinstance(outcome, ContextFileError) and "refusing" in str(outcome)

    history = await files.add_history("a", "b", "mine\n", hint="h")
    hist_path = file_of(files, history.id)
    hist_path.unlink()
    hist_path.symlink_to(outside)
    async for outcome in _each_operation(files, history.id):
        assert isinstance(outcome, ContextFileError) and "refusing" in str(outcome)


async def test_a_symlink_where_a_file_will_be_built_is_replaced_not_written_through(store, tmp_path, outside):
    _, files, ref = await _session_with_artifact(store, tmp_path)
    await files.read(ref)
    path = file_of(files, ref)
    data = manifest.load(files.folder)
    del data["entries"][ref]  # as after eviction: the next access builds the file again
    manifest.save(files.folder, data)
    path.unlink()
    path.symlink_to(outside)
    assert (await files.read(ref)).content.startswith("inside")
    assert outside.read_text() == SECRET * 400 and not path.is_symlink()


async def test_symlinked_folders_are_refused(store, tmp_path, outside):
    _, files, ref = await _session_with_artifact(store, tmp_path)
    await files.read(ref)
    elsewhere = tmp_path / "elsewhere"
    (files.folder / "artifacts").rename(elsewhere)
    (files.folder / "artifacts").symlink_to(elsewhere)
    async for outcome in _each_operation(files, ref):
        assert isinstance(outcome, ContextFileError) and "refusing" in str(outcome)
    with pytest.raises(ContextFileError, match="refusing"):
        security.write_atomic(files.folder, "artifacts/tool/new.txt", b"x")
    assert not (elsewhere / "tool" / "new.txt").exists()


async def test_a_symlinked_session_folder_is_refused(store, tmp_path, outside):
    session, files, ref = await _session_with_artifact(store, tmp_path)
    real = tmp_path / "real-folder"
    real.mkdir()
    files.folder.parent.mkdir(parents=True, exist_ok=True)
    files.folder.symlink_to(real)
    async for outcome in _each_operation(files, ref):
        assert isinstance(outcome, ContextFileError) and "refusing" in str(outcome)
    assert list(real.iterdir()) == []


@pytest.mark.parametrize("session_id", ["../x", "/abs", "a/b", "..", ".hidden", "x\0y", ""])
async def test_bad_session_ids_are_refused(store, tmp_path, session_id):
    with pytest.raises(ContextFileError, match="invalid session id"):
        files_for(store, type("S", (), {"id": session_id})(), tmp_path)


def test_relative_paths_are_plain_names_only():
    for bad in ("../a", "/a", "a/../b", "a//b", "a\\b", "a/\0", "", "a/.b"):
        with pytest.raises(ContextFileError):
            security.parts_of(bad)
    assert security.parts_of("artifacts/tool/c1-0123abcd.txt") == ["artifacts", "tool", "c1-0123abcd.txt"]


def test_atomic_writes_leave_no_partial_file(tmp_path, monkeypatch):
    base = tmp_path / "s"
    security.write_atomic(base, "a/b.txt", b"old")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        security.write_atomic(base, "a/b.txt", b"new")
    assert (base / "a" / "b.txt").read_bytes() == b"old"
    assert os.listdir(base / "a") == ["b.txt"]  # the temporary file was removed


def test_redaction_masks_obvious_secrets_only():
    text = json.dumps(
        {
            "openai": "sk-" + "a" * 40,
            "aws": "AKIA" + "B" * 16,
            "github": "ghp_" + "c" * 36,
            "slack": "xoxb-1234567890-abcdef",
            "word": "skeleton key",
            "short": "sk-abc",
        }
    )
    masked = security.redact(text)
    assert len(masked) == len(text)
    for secret in ("a" * 40, "B" * 16, "c" * 36, "1234567890-abcdef"):
        assert secret not in masked
    assert "skeleton key" in masked and "sk-abc" in masked
