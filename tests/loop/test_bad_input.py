"""Bad input never crashes the loop: each case gives the model an Error: or capped result."""

from __future__ import annotations

import json
import sqlite3

from agent.paths import db_path
from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type


async def run_one_call(server, open_runtime, name, arguments, *, yolo=True, approver=None):
    """The model makes one tool call, then answers; returns (tool message, runtime)."""
    server.add(tool_calls([("c1", name, arguments)]), text("noted"))
    runtime = await open_runtime(yolo=yolo, approver=approver)
    try:
        await runtime.submit(Prompt("go"))
    finally:
        await runtime.close()
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    assert of_type(runtime.events, "assistant_finished")[-1].message.content == "noted"
    (finished,) = of_type(runtime.events, "tool_finished")
    return finished.message, runtime


async def test_invalid_tool_json(server, open_runtime):
    msg, _ = await run_one_call(server, open_runtime, "filesystem-read", '{"filePath": "a.py"')
    assert msg.content.startswith("Error: invalid JSON") and msg.status == "error"
    # The broken arguments reach the model again verbatim, with the error right after.
    sent = server.requests[1]["messages"]
    assert sent[-2]["tool_calls"][0]["function"]["arguments"] == '{"filePath": "a.py"'
    assert sent[-1]["content"].startswith("Error: invalid JSON")


async def test_unknown_tool(server, open_runtime):
    msg, _ = await run_one_call(server, open_runtime, "rm-rf", "{}")
    assert msg.content.startswith("Error: unknown tool 'rm-rf'")


async def test_path_outside_workspace_refused_without_approval(server, open_runtime, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    msg, _ = await run_one_call(server, open_runtime, "filesystem-read", {"filePath": "../secret.txt"}, yolo=False)
    assert msg.content.startswith("Error:") and "outside the workspace" in msg.content
    assert "top secret" not in msg.content


async def test_denied_command_is_not_run(server, open_runtime, workspace):
    requests = []

    async def deny(request):
        requests.append(request)
        return "deny"

    msg, _ = await run_one_call(
        server, open_runtime, "terminal-execute", {"command": "touch made"}, yolo=False, approver=deny
    )
    assert msg.content.startswith("Error:") and not (workspace / "made").exists()
    assert requests[0].kind == "command" and requests[0].detail == "touch made"


async def test_command_timeout(server, open_runtime):
    msg, _ = await run_one_call(server, open_runtime, "terminal-execute", {"command": "sleep 30", "timeout": 1})
    assert msg.status == "error" and msg.meta["timedOut"] is True


async def test_huge_command_output_capped_for_model_whole_in_storage(server, open_runtime):
    from agent.tools.terminal import STREAM_KEEP_BYTES

    size = STREAM_KEEP_BYTES - 1024 * 1024  # all of it is kept (more is cut to head and tail)
    msg, _ = await run_one_call(
        server, open_runtime, "terminal-execute", {"command": f"head -c {size} /dev/zero | tr '\\0' a"}
    )
    stored = sqlite3.connect(db_path()).execute("SELECT content FROM messages WHERE id = ?", (msg.id,)).fetchone()[0]
    assert len(json.loads(stored)["stdout"]) == size
    sent = server.requests[1]["messages"][-1]["content"]
    assert len(sent) < 4_000 and json.loads(sent)["truncated"]["stdoutChars"] == size


async def test_binary_file_read(server, open_runtime, workspace):
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 100)
    msg, _ = await run_one_call(server, open_runtime, "filesystem-read", {"filePath": "blob.bin"})
    assert msg.content.startswith("Error:") and "binary" in msg.content


async def test_wrong_argument_types(server, open_runtime):
    msg, _ = await run_one_call(server, open_runtime, "filesystem-edit", {"filePath": 3})
    assert msg.content.startswith("Error: invalid arguments for filesystem-edit")
