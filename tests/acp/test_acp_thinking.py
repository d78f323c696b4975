"""Issue 28 over ACP: a model's thinking reaches the editor as `agent_thought_chunk` session
updates as it streams, before the answer's `agent_message_chunk`s, and a loaded session replays
it the same way. The installed `cairn acp`, driven by the `agent-client-protocol` package's
client side, against the scripted OpenAI-style server (`reasoning_content` deltas)."""

from __future__ import annotations

import asyncio
import os

import pytest

pytest.importorskip("acp")
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block  # noqa: E402

from tests.acp.test_acp_end_to_end import CAIRN, TIMEOUT, Editor  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer, text  # noqa: E402

pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
REASONING = "The user wants a greeting. A short one will do; no tools needed."


def start(editor: Editor, srv, workspace):
    args = ["--model", "openai/fake-model", "--api-base", srv.base_url, "--api-key", "sk-test", "acp"]
    return spawn_agent_process(editor, str(CAIRN), *args, env=os.environ.copy(), cwd=str(workspace))


async def test_thinking_streams_as_thought_chunks_and_is_replayed_on_load(workspace):
    with FakeLLMServer([text("Hello!", reasoning=REASONING, chunk_size=5)]) as srv:
        editor = Editor()
        async with start(editor, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            session = await asyncio.wait_for(conn.new_session(cwd=str(workspace), mcp_servers=[]), TIMEOUT)
            answer = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("say hello")]), TIMEOUT
            )
        assert answer.stop_reason == "end_turn"
        kinds = editor.kinds()
        assert kinds.count("agent_thought_chunk") > 1  # piece by piece, as it streamed
        assert editor.text("agent_thought_chunk") == REASONING
        assert editor.text() == "Hello!"
        last_thought = max(i for i, k in enumerate(kinds) if k == "agent_thought_chunk")
        assert last_thought < kinds.index("agent_message_chunk")

        later = Editor()
        async with start(later, srv, workspace) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
            await asyncio.wait_for(
                conn.load_session(cwd=str(workspace), session_id=session.session_id, mcp_servers=[]), TIMEOUT
            )
        assert later.text("agent_thought_chunk") == REASONING
        replayed = later.kinds()
        assert replayed.index("agent_thought_chunk") < replayed.index("agent_message_chunk")
        assert later.text() == "Hello!"
