"""The session's servers against a fake that speaks the protocol: only what an edit introduced,
the bound on a server that hangs, one restart for one that crashes, the sandbox it runs in."""

from __future__ import annotations

import socket

from tests.lsp.conftest import fake_settings


async def test_only_the_errors_an_edit_introduced_are_reported_and_a_fix_says_so(make_manager, workspace):
    manager = make_manager(fake_settings("publish", timeout_ms=30_000))
    path = workspace / "m.py"
    old = "x = 1\ny = BADold\n"
    new = "x = BADnew\ny = BADold\n"
    said = await manager.after_edit(path, "m.py", old, new)
    assert said == "Diagnostics (fake): this edit introduced 1 error in m.py:\n  1:5 error: found BADnew [fake]"
    # The server holds the file as edited: the next edit's "before" is what it already published.
    assert await manager.after_edit(path, "m.py", new, "x = 1\ny = BADold\n") == (
        "Diagnostics (fake): fixed 1 error in m.py; none new."
    )
    assert await manager.after_edit(path, "m.py", "x = 1\ny = BADold\n", "x = 2\ny = BADold\n") == ""
    # A new file: everything in it is new.
    assert "found BADx" in await manager.after_edit(workspace / "n.py", "n.py", None, "BADx\n")
    # Not a file of its language: no server asked.
    assert await manager.after_edit(workspace / "r.txt", "r.txt", "a", "BADy") == ""


async def test_a_server_that_never_publishes_does_not_hold_the_edit(make_manager, workspace):
    manager = make_manager(fake_settings("hang-diagnostics", timeout_ms=300))
    said = await manager.after_edit(workspace / "m.py", "m.py", "a = 1\n", "a = BAD\n")
    while said.startswith("Diagnostics: fake is still starting"):  # a loaded machine: the start took longer
        said = await manager.after_edit(workspace / "m.py", "m.py", "a = 1\n", "a = BAD\n")
    assert said == "Diagnostics: fake gave none within 300 ms."
    # The edit is done while the server still sits there, silent, and is kept for the next edit.
    (status,) = [s for s in manager.status() if s.name == "fake"]
    assert status.state == "running"


async def test_a_server_that_never_finishes_starting_does_not_hold_the_edit(make_manager, workspace):
    manager = make_manager(fake_settings("hang-initialize", timeout_ms=300))
    said = await manager.after_edit(workspace / "m.py", "m.py", "a = 1\n", "a = BAD\n")
    assert said.startswith("Diagnostics: fake is still starting (not ready within 300 ms)")
    assert [s.state for s in manager.status() if s.name == "fake"] == ["starting"]


async def test_a_server_that_crashes_is_started_again_once_then_given_up(make_manager, workspace, tmp_path):
    log = tmp_path / "starts.log"  # outside the sandbox's reach: this run is unsandboxed on purpose
    manager = make_manager(fake_settings("crash-on-change", "--log", str(log), timeout_ms=30_000, unsandboxed=True))
    path = workspace / "m.py"
    first = await manager.after_edit(path, "m.py", "a = 1\n", "a = 2\n")
    assert first.startswith("Diagnostics: fake stopped (it exited (exit code 3)); it is started again at the next edit")
    second = await manager.after_edit(path, "m.py", "a = 2\n", "a = 3\n")
    assert second.startswith("Diagnostics: fake stopped again (")
    assert "no diagnostics from it for the rest of this session" in second
    assert await manager.after_edit(path, "m.py", "a = 3\n", "a = 4\n") == ""  # said once, not started again
    assert len(log.read_text().splitlines()) == 2
    assert [s.state for s in manager.status() if s.name == "fake"] == ["failed"]


async def test_the_server_runs_in_the_sandbox(make_manager, workspace, monkeypatch, _isolated_home):
    """No writes to the workspace, cairn's data folder hidden, no token in its environment, no network."""
    secret = _isolated_home / "secret.txt"
    secret.write_text("s3cret")
    listener = socket.create_server(("127.0.0.1", 0))
    monkeypatch.setenv("PROBE_SECRET_FILE", str(secret))
    monkeypatch.setenv("PROBE_PORT", str(listener.getsockname()[1]))
    monkeypatch.setenv("CAIRN_FAKE_TOKEN", "tok-123456789")
    manager = make_manager(fake_settings("probe", timeout_ms=30_000))
    try:
        said = await manager.after_edit(workspace / "m.py", "m.py", None, "a = 1\n")
    finally:
        listener.close()
    for line in ("write: denied", "secret: unreadable", "token: hidden", "network: blocked"):
        assert line in said
    assert not (workspace / "probe-write.txt").exists()


async def test_without_a_sandbox_no_server_starts_unless_the_user_says_so(workspace, tmp_path):
    from agent.lsp.manager import LspManager
    from agent.tools.sandbox import Sandbox
    from tests.lsp.conftest import no_path

    log = tmp_path / "starts.log"
    broken = Sandbox(workspace, bwrap="/bin/false")  # a bwrap that cannot make a sandbox here
    manager = LspManager(fake_settings("publish", "--log", str(log)), workspace, broken, which=no_path)
    said = await manager.after_edit(workspace / "m.py", "m.py", "a = 1\n", "a = BAD\n")
    assert said.startswith("Diagnostics: fake not started: language servers run the repository's code")
    assert "`[lsp] unsandboxed = true`" in said
    assert await manager.after_edit(workspace / "m.py", "m.py", "a = BAD\n", "a = 1\n") == ""  # said once
    assert not log.exists() and not manager.offered  # probed now: the `lsp` tool would not be offered
    settings = fake_settings("publish", "--log", str(log), unsandboxed=True, timeout_ms=30_000)
    allowed = LspManager(settings, workspace, broken, which=no_path)
    try:
        assert "found BAD" in await allowed.after_edit(workspace / "m.py", "m.py", "a = 1\n", "a = BAD\n")
    finally:
        await allowed.close()
    assert len(log.read_text().splitlines()) == 1


async def test_closing_ends_the_servers(make_manager, workspace):
    manager = make_manager(fake_settings("publish", timeout_ms=30_000))
    await manager.after_edit(workspace / "m.py", "m.py", "a = 1\n", "a = 2\n")
    client = manager._servers["fake"].client
    assert client is not None and client.alive
    await manager.close()
    assert client.proc is not None and client.proc.returncode is not None


async def test_a_server_silent_edit_after_edit_is_taken_for_hung_and_started_again(make_manager, workspace, tmp_path):
    log = tmp_path / "starts.log"
    manager = make_manager(fake_settings("hang-diagnostics", "--log", str(log), timeout_ms=200, unsandboxed=True))
    path = workspace / "m.py"
    said = [await manager.after_edit(path, "m.py", "a = 1\n", "a = 2\n")]
    while said[-1].startswith("Diagnostics: fake is still starting"):  # a loaded machine: the start took longer
        said = [await manager.after_edit(path, "m.py", "a = 1\n", "a = 2\n")]
    for _ in range(2):
        said.append(await manager.after_edit(path, "m.py", "a = 1\n", "a = 2\n"))
    assert said[:2] == ["Diagnostics: fake gave none within 200 ms."] * 2
    assert said[2].startswith(
        "Diagnostics: fake stopped (no diagnostics within 200 ms 3 times in a row); it is started"
    )
    await manager.after_edit(path, "m.py", "a = 1\n", "a = 2\n")  # the one restart
    starting = manager._servers["fake"].starting
    assert starting is not None
    await starting  # answered initialize: it is past writing its line
    assert len(log.read_text().splitlines()) == 2
