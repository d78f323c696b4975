"""Through a real Runtime and the fake model: the edit's diagnostics reach the model in the next
request, the `lsp` tool is offered only when a server was found, servers end with the session."""

from __future__ import annotations

import os
import shutil
from types import SimpleNamespace

import pytest

from agent.runtime.ops import Prompt
from agent.ui.commands.status import status_text
from tests.fakes.llm_server import text, tool_calls
from tests.lsp.conftest import PYLSP


def _tool_names(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def _tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


@pytest.mark.skipif(not PYLSP.exists(), reason="python-lsp-server is a dev dependency: not installed")
async def test_an_edit_s_new_error_reaches_the_model_and_the_server_ends_with_the_session(open_runtime, server):
    workspace = open_runtime.workspace
    (workspace / "app.py").write_text("import os\n\nprint(os.sep)\n")
    server.add(
        tool_calls(
            [
                (
                    "e1",
                    "filesystem-edit",
                    {"filePath": "app.py", "searchContent": "os.sep", "replaceContent": "os.sep, nme"},
                )
            ]
        ),
        text("I broke it."),
    )
    runtime = await open_runtime(flags={"lsp": {"timeout_ms": 60_000, "servers": {"pylsp": {"command": [str(PYLSP)]}}}})
    try:
        await runtime.submit(Prompt("edit app.py"))
        first, second = server.requests
        assert "lsp" in _tool_names(first)
        (result,) = _tool_results(second)
        assert (
            "Diagnostics (pylsp): this edit introduced 1 error in app.py:\n  3:15 error: undefined name 'nme'" in result
        )
        status = status_text(SimpleNamespace(settings=runtime.settings, runtime=runtime, config_warnings=[]))
        assert "\nLanguage servers (diagnostics after edits)\n  pylsp          running · .py .pyi\n" in status
        client = runtime.agent.ctx.lsp._servers["pylsp"].client  # type: ignore[union-attr]
        assert client is not None and client.proc is not None
    finally:
        await runtime.close()
    assert client.proc.returncode is not None  # bwrap and the server inside it: gone with the session


async def test_the_lsp_tool_is_not_offered_when_no_server_is_found(open_runtime, server, tmp_path, monkeypatch):
    bare = tmp_path / "bin"  # a PATH with bubblewrap (a sandbox could be made) and no language server
    bare.mkdir()
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    os.symlink(bwrap, bare / "bwrap")
    monkeypatch.setenv("PATH", str(bare))
    server.add(text("ok"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
        (request,) = server.requests
        assert "lsp" not in _tool_names(request) and "filesystem-edit" in _tool_names(request)
        assert {s.state for s in runtime.language_servers()} == {"not found"}
        status = status_text(SimpleNamespace(settings=runtime.settings, runtime=runtime, config_warnings=[]))
        assert "\n  not found: pylsp, pyright, basedpyright, typescript, gopls, rust-analyzer" in status
    finally:
        await runtime.close()


@pytest.mark.skipif(not PYLSP.exists(), reason="python-lsp-server is a dev dependency: not installed")
async def test_a_subagents_edit_is_diagnosed_by_the_sessions_server(open_runtime, server):
    workspace = open_runtime.workspace
    (workspace / "app.py").write_text("import os\n\nprint(os.sep)\n")
    edit = {"filePath": "app.py", "searchContent": "os.sep", "replaceContent": "os.sep, nme"}
    server.add(
        tool_calls([("s1", "subagent", {"agent": "general", "task": "break app.py"})]),
        tool_calls([("e1", "filesystem-edit", edit)]),  # the child's
        text("child: edited"),
        text("parent: done"),
    )
    runtime = await open_runtime(flags={"lsp": {"timeout_ms": 60_000, "servers": {"pylsp": {"command": [str(PYLSP)]}}}})
    try:
        await runtime.submit(Prompt("delegate"))
    finally:
        await runtime.close()
    child_after_edit = server.requests[2]
    (result,) = _tool_results(child_after_edit)
    assert "undefined name 'nme'" in result
