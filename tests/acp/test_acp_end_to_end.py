"""`cairn acp` driven end to end by the `agent-client-protocol` package's own client side, as an
editor would: initialize, a new session, a prompt whose command and file change need the
editor's permission (granted), streamed text and tool-call updates, the changed file handed
to the editor, a cancel mid-turn, and loading the session again in a new process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block  # noqa: E402
from acp.schema import (  # noqa: E402
    AllowedOutcome, ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse, RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.fakes.llm_server import FakeLLMServer, hang, text, tool_calls  # noqa: E402

CAIRN = Path(sys.executable).parent / "cairn"
pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
TIMEOUT = 180  # the agent imports litellm: slow on a loaded 2-core machine


class Editor:
    """The client side: records what the agent sends, grants every permission once."""

    def __init__(self) -> None:
        self.updates: list = []
        self.permissions: list = []
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []

    async def session_update(self, session_id, update, **kwargs) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append((tool_call, [o.option_id for o in options]))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id="once", outcome="selected"))

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.writes.append((path, content))
        return WriteTextFileResponse()

    async def read_text_file(self, session_id, path, **kwargs):
        self.reads.append(path)
        return ReadTextFileResponse(content="unsaved editor text\n")

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.updates if u.session_update == kind)


def _agent_args(srv, *, yolo: bool = False) -> list[str]:
    return ["--model", "openai/fake-model", "--api-base", srv.base_url, "--api-key", "sk-test",
            *(["--yolo"] if yolo else []), "acp"]


async def _start(editor: Editor, srv, workspace: Path):
    return spawn_agent_process(editor, str(CAIRN), *_agent_args(srv), env=os.environ.copy(), cwd=str(workspace))


async def test_editor_session_prompt_permission_cancel_and_load(workspace):
    with FakeLLMServer([
        tool_calls([("c1", "terminal-execute", {"command": "touch made"})], text="Making it."),
        tool_calls([("c2", "filesystem-create", {"filePath": "notes.txt", "content": "hello\n"})]),
        text("Made both.", chunk_size=3),
        hang(300, text="thinking"),
    ]) as srv:
        srv.allow_unused = True
        editor = Editor()
        async with await _start(editor, srv, workspace) as (conn, _process):
            init = await asyncio.wait_for(conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False,
                                                                                 write_text_file=True))), TIMEOUT)
            assert init.agent_capabilities.load_session is True and init.agent_info.name == "cairn"
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                        prompt=[text_block("make a file and notes")]), TIMEOUT)
            assert answer.stop_reason == "end_turn"
            # The command and the file change ran because the editor granted them.
            assert (workspace / "made").exists() and (workspace / "notes.txt").read_text() == "hello\n"
            assert [p[0].tool_call_id for p in editor.permissions] == ["c1", "c2"]
            assert all("once" in options and "deny" in options for _, options in editor.permissions)
            # Streamed text and tool calls, in order.
            kinds = editor.kinds()
            assert kinds.count("tool_call") == 2 and kinds.count("tool_call_update") == 2
            assert kinds.index("tool_call") < kinds.index("tool_call_update")
            assert editor.text().startswith("Making it.") and editor.text().endswith("Made both.")
            assert sum(1 for k in kinds if k == "agent_message_chunk") >= 4  # "Made both." came in pieces
            done = [u for u in editor.updates if u.session_update == "tool_call_update"]
            assert {u.status for u in done} == {"completed"}
            assert editor.writes == [(str((workspace / "notes.txt").resolve()), "hello\n")]

            # Cancel mid-turn: the model's request hangs until the editor cancels.
            prompt = asyncio.ensure_future(conn.prompt(session_id=session.session_id,
                                                       prompt=[text_block("think hard")]))
            await asyncio.to_thread(srv.wait_for_requests, 4, TIMEOUT)
            await conn.cancel(session_id=session.session_id)
            cancelled = await asyncio.wait_for(prompt, TIMEOUT)
            assert cancelled.stop_reason == "cancelled"

        # A new editor process loads the stored session: its history is replayed.
        later = Editor()
        async with await _start(later, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id=session.session_id,
                                                     mcp_servers=[]), TIMEOUT)
            assert later.text("user_message_chunk").startswith("make a file and notes")
            assert "Made both." in later.text() and "thinking" in later.text()
            assert later.kinds().count("tool_call") == 2


async def test_reads_go_through_an_editor_that_offers_them(workspace):
    """A file open in the editor is read as the user sees it (unsaved changes included)."""
    (workspace / "a.txt").write_text("disk text\n")
    with FakeLLMServer([tool_calls([("c1", "filesystem-read", {"filePath": "a.txt"})]), text("Read it.")]) as srv:
        editor = Editor()
        async with await _start(editor, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True))), TIMEOUT)
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                        prompt=[text_block("read a.txt")]), TIMEOUT)
        sent = srv.requests[-1]["messages"]
    assert answer.stop_reason == "end_turn"
    assert editor.reads == [str((workspace / "a.txt").resolve())]
    result = next(m for m in sent if m["role"] == "tool")
    assert "1→unsaved editor text" in result["content"] and "disk text" not in result["content"]


async def test_load_of_an_unknown_session_is_an_error(workspace):
    with FakeLLMServer([]) as srv:
        editor = Editor()
        async with await _start(editor, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            with pytest.raises(acp.RequestError):
                await asyncio.wait_for(conn.load_session(cwd=str(workspace), session_id="nope", mcp_servers=[]),
                                       TIMEOUT)
