"""`cairn session list | export | import` through the installed console script (SPEC §11)."""

from __future__ import annotations

import json

import pytest

from agent.session.models import Message, ToolCall
from agent.session.store import Store
from tests.test_cli import CAIRN, run

pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")


async def _make_sessions() -> list[str]:
    """Two sessions, the second one newer; returns their ids oldest first."""
    store = await Store.open()
    try:
        ids = []
        for n, title in enumerate(["older", "newer"]):
            session = await store.create_session(cwd="/w", model="openai/fake", title=title)
            await store.append(session, Message(role="user", content=f"prompt {n}"))
            await store.append(
                session,
                Message(
                    role="assistant",
                    tool_calls=[ToolCall(id="c1", name="terminal-execute", arguments='{"command":"ls"}')],
                ),
            )
            await store.append(
                session,
                Message(
                    role="tool",
                    tool_call_id="c1",
                    tool_name="terminal-execute",
                    content='{"command":"ls","stdout":"","stderr":"","exitCode":0}',
                ),
            )
            await store.append(session, Message(role="assistant", content=f"answer {n} ✓"))
            ids.append(session.id)
        return ids
    finally:
        await store.close()


def _ok(out):
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return out.stdout


def _bad(out, text):
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert out.stderr.startswith("Error:") and text in out.stderr and "Traceback" not in out.stderr


async def test_list_newest_first(workspace):
    older, newer = await _make_sessions()
    rows = json.loads(_ok(run("session", "list", "--json")))
    assert [r["id"] for r in rows] == [newer, older]
    assert rows[0]["title"] == "newer" and rows[0]["message_count"] == 4 and rows[0]["first_prompt"] == "prompt 1"
    text = _ok(run("session", "list")).splitlines()
    assert text[0].startswith(newer) and "newer" in text[0] and text[1].startswith(older)


def test_list_empty():
    assert json.loads(_ok(run("session", "list", "--json"))) == []


async def test_export_md_and_jsonl_to_stdout_and_file(workspace, tmp_path):
    _, newer = await _make_sessions()
    md = _ok(run("session", "export", newer[:8], "--format", "md"))
    assert md.startswith("# newer\n") and "## User" in md and "answer 1 ✓" in md and "terminal-execute" in md
    jsonl = _ok(run("session", "export", newer))
    assert json.loads(jsonl.splitlines()[0])["format"] == "cairn-session" and len(jsonl.splitlines()) == 5
    target = tmp_path / "out.jsonl"
    assert _ok(run("session", "export", newer, "--format", "jsonl", "-o", str(target))) == ""
    assert target.read_text(encoding="utf-8") == jsonl
    md_file = tmp_path / "out.md"
    _ok(run("session", "export", newer, "--format", "md", "-o", str(md_file)))
    assert md_file.read_text(encoding="utf-8") == md


async def test_import_prints_the_new_id_and_round_trips(workspace, tmp_path, monkeypatch):
    _, newer = await _make_sessions()
    exported = tmp_path / "s.jsonl"
    _ok(run("session", "export", newer, "-o", str(exported)))
    # Same database: the ids are taken, so a new session comes back.
    copy = json.loads(_ok(run("session", "import", str(exported), "--json")))["session_id"]
    assert copy != newer
    assert "answer 1 ✓" in _ok(run("session", "export", copy, "--format", "md"))
    # A fresh CAIRN_HOME keeps the id and the bytes.
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "fresh"))
    assert _ok(run("session", "import", str(exported), "--format", "cairn")).strip() == newer
    assert _ok(run("session", "export", newer)) == exported.read_text(encoding="utf-8")


def test_import_openai_with_cwd_default(workspace, tmp_path):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps([{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "hey"}]))
    session_id = _ok(run("--cwd", str(workspace), "session", "import", str(source))).strip()
    rows = json.loads(_ok(run("session", "list", "--json")))
    assert rows[0]["id"] == session_id and rows[0]["cwd"] == str(workspace.resolve())
    assert rows[0]["title"] == "hi there" and rows[0]["message_count"] == 2


def test_errors_exit_2_without_traceback(tmp_path):
    _bad(run("session", "export", "nope"), "no session matches 'nope'")
    _bad(run("session", "import", str(tmp_path / "missing.jsonl")), "cannot read")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    _bad(run("session", "import", str(junk)), "not a recognised session format")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"x"}}\n{bad\n')
    _bad(run("session", "import", str(broken)), "line 2")
    _bad(run("session", "import", str(junk), "--format", "openai"), "not valid JSON")
    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"\xff\xfe\x00bad")
    _bad(run("session", "import", str(binary)), "not UTF-8")
    out = run("session", "import", str(junk), "--format", "yaml")
    assert out.returncode == 2 and "invalid choice" in out.stderr
    out = run("session")
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_help_lists_the_session_commands():
    out = run("--help")
    assert "{context,session,trust,acp,worktree}" in out.stdout
    out = run("session", "--help")
    assert out.returncode == 0 and "list" in out.stdout and "export" in out.stdout and "import" in out.stdout


def test_the_import_formats_on_the_command_line_are_the_importers_formats():
    from agent.cli import IMPORT_FORMATS
    from agent.session.importers import FORMATS

    assert set(IMPORT_FORMATS) == {"auto", *FORMATS}


def _as_nobody() -> list[str]:
    """Root writes anywhere: run cairn as `nobody` to meet a read-only folder (skip when not possible)."""
    import os
    import shutil

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be simulated")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


async def test_list_and_export_work_on_a_read_only_data_folder(monkeypatch):
    """Issue 32: reading commands open the database read-only (`mode=ro`), so a data folder
    cairn may not write (a backup, another user's) can still be listed and exported; the
    folder is left exactly as it was."""
    import os
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    prefix = _as_nobody()
    base = Path(tempfile.mkdtemp(prefix="cairn-ro-"))
    home = base / "home"
    try:
        base.chmod(0o755)
        home.mkdir()
        monkeypatch.setenv("CAIRN_HOME", str(home))
        older, newer = await _make_sessions()
        before = sorted(p.name for p in home.iterdir())
        for path in home.iterdir():
            path.chmod(0o444)
        home.chmod(0o555)

        def cairn(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [*prefix, str(CAIRN), *args],
                capture_output=True,
                text=True,
                cwd=base,
                env={**os.environ, "CAIRN_HOME": str(home)},
                stdin=subprocess.DEVNULL,
                timeout=60,
            )

        rows = json.loads(_ok(cairn("session", "list", "--json")))
        assert [r["id"] for r in rows] == [newer, older]
        assert "prompt 0" in _ok(cairn("session", "export", older, "--format", "md"))
        exported = _ok(cairn("session", "export", newer))
        assert "answer 1 ✓" in exported
        assert sorted(p.name for p in home.iterdir()) == before
    finally:
        home.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
