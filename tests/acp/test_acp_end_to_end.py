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
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
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


async def _until(condition) -> None:
    """Return once `condition()` holds (the caller bounds the wait: a hang detector)."""
    while not condition():
        await asyncio.sleep(0.02)


def _agent_args(srv, *, yolo: bool = False) -> list[str]:
    return [
        "--model",
        "openai/fake-model",
        "--api-base",
        srv.base_url,
        "--api-key",
        "sk-test",
        *(["--yolo"] if yolo else []),
        "acp",
    ]


async def _start(editor: Editor, srv, workspace: Path):
    return spawn_agent_process(editor, str(CAIRN), *_agent_args(srv), env=os.environ.copy(), cwd=str(workspace))


async def test_editor_session_prompt_permission_cancel_and_load(workspace):
    with FakeLLMServer(
        [
            tool_calls([("c1", "terminal-execute", {"command": "touch made"})], text="Making it."),
            tool_calls([("c2", "filesystem-create", {"filePath": "notes.txt", "content": "hello\n"})]),
            text("Made both.", chunk_size=3),
            hang(300, text="thinking"),
        ]
    ) as srv:
        srv.allow_unused = True
        editor = Editor()
        async with await _start(editor, srv, workspace) as (conn, _process):
            init = await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(
                        fs=FileSystemCapabilities(read_text_file=False, write_text_file=True)
                    ),
                ),
                TIMEOUT,
            )
            assert init.agent_capabilities.load_session is True and init.agent_info.name == "cairn"
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("make a file and notes")]), TIMEOUT
            )
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
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=[text_block("think hard")])
            )
            await asyncio.to_thread(srv.wait_for_requests, 4, TIMEOUT)
            # Cancel once the partial answer has reached the editor (so it was stored): the
            # request arriving at the server says nothing about its first chunk coming back.
            await asyncio.wait_for(_until(lambda: "thinking" in editor.text()), TIMEOUT)
            await conn.cancel(session_id=session.session_id)
            cancelled = await asyncio.wait_for(prompt, TIMEOUT)
            assert cancelled.stop_reason == "cancelled"

        # A new editor process loads the stored session: its history is replayed.
        later = Editor()
        async with await _start(later, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            await asyncio.wait_for(
                conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[]), TIMEOUT
            )
            assert later.text("user_message_chunk").startswith("make a file and notes")
            assert "Made both." in later.text() and "thinking" in later.text()
            assert later.kinds().count("tool_call") == 2


async def test_reads_go_through_an_editor_that_offers_them(workspace):
    """A file open in the editor is read as the user sees it (unsaved changes included)."""
    (workspace / "a.txt").write_text("disk text\n")
    with FakeLLMServer([tool_calls([("c1", "filesystem-read", {"filePath": "a.txt"})]), text("Read it.")]) as srv:
        editor = Editor()
        async with await _start(editor, srv, workspace) as (conn, _process):
            await asyncio.wait_for(
                conn.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
                ),
                TIMEOUT,
            )
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("read a.txt")]), TIMEOUT
            )
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
                await asyncio.wait_for(
                    conn.load_session(cwd=str(workspace), session_id="nope", mcp_servers=[]), TIMEOUT
                )


async def test_the_editors_mcp_servers_are_started_for_its_session(workspace):
    """An editor passes its MCP servers with `session/new` (Zed's context servers): cairn
    starts them for that session, the model gets their tools, and a call is asked of the editor."""
    from acp.schema import EnvVariable, McpServerStdio, SseMcpServer

    from tests.conftest import REPO_ROOT

    with FakeLLMServer([tool_calls([("c1", "mcp__fake__echo", {"text": "from the editor"})]), text("Echoed.")]) as srv:
        editor = Editor()
        async with await _start(editor, srv, workspace) as (conn, _process):
            init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            assert init.agent_capabilities.mcp_capabilities.http is True
            assert init.agent_capabilities.mcp_capabilities.sse is False
            servers = [
                McpServerStdio(
                    name="fake",
                    command=sys.executable,
                    args=["-m", "tests.fakes.mcp_server"],
                    env=[EnvVariable(name="PYTHONPATH", value=str(REPO_ROOT))],
                ),
                SseMcpServer(name="old", url="http://127.0.0.1:9/sse", headers=[], type="sse"),
            ]
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=servers), TIMEOUT)
            # The first prompt waits for the servers to be ready (up to mcp.headless_wait).
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("echo it")]), TIMEOUT
            )
        first, second = srv.requests
    assert answer.stop_reason == "end_turn"
    assert "mcp__fake__echo" in [t["function"]["name"] for t in first.get("tools") or []]
    assert [p[0].tool_call_id for p in editor.permissions] == ["c1"]  # an MCP call is asked
    result = next(m for m in second["messages"] if m["role"] == "tool")
    assert result["content"] == "echo: from the editor"


def test_editor_servers_become_config_tables():
    from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

    from agent.acp.server import editor_servers

    tables = editor_servers(
        [
            McpServerStdio(
                name="git", command="uvx", args=["mcp-server-git"], env=[EnvVariable(name="A", value="${B}")]
            ),
            HttpMcpServer(
                name="docs",
                url="https://example.com/mcp",
                headers=[HttpHeader(name="Authorization", value="Bearer t")],
                type="http",
            ),
            SseMcpServer(name="old", url="https://example.com/sse", headers=[], type="sse"),
        ]
    )
    assert list(tables) == ["git", "docs"]  # SSE is not spoken, so not started
    assert tables["git"].command == "uvx" and tables["git"].args == ["mcp-server-git"]
    assert tables["git"].env == {"A": "${B}"}
    assert tables["docs"].url == "https://example.com/mcp" and tables["docs"].headers == {"Authorization": "Bearer t"}


def test_editor_values_are_taken_as_given_and_config_wins_a_name(tmp_path):
    from agent.mcp.servers import server_specs
    from agent.settings.schema import McpServerSettings, Settings

    settings = Settings.model_validate(
        {"workspace": str(tmp_path), "mcp": {"servers": {"git": {"command": "git-mcp"}}}}
    )
    specs, problems = server_specs(
        settings,
        editor={
            "git": McpServerSettings(command="other"),
            "echo": McpServerSettings(command="echo-mcp", env={"TOKEN": "${HOME}"}),
        },
    )
    assert [(s.name, s.source, s.command) for s in specs] == [
        ("git", "config.toml", "git-mcp"),
        ("echo", "editor", "echo-mcp"),
    ]
    assert specs[1].env == {"TOKEN": "${HOME}"} and specs[1].cwd == str(tmp_path)
    assert problems == ["MCP server 'git' of the editor ignored: config.toml defines it"]
    # A trusted .mcp.json of the same name names who won.
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"echo": {"command": "x"}}}')
    from agent.mcp.servers import read_mcp_json

    state = read_mcp_json(tmp_path).model_copy(update={"trusted": True})
    _, problems = server_specs(settings, mcp_json=state, editor={"echo": McpServerSettings(command="echo-mcp")})
    assert problems == [f"MCP server 'echo' of {tmp_path / '.mcp.json'} ignored: the editor defines it"]
