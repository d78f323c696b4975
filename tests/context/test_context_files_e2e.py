"""Seed 004 end to end: a 2 MB command output reaches the model as a preview and a ref, and
the model's next call greps the ref and finds the line it needs."""

from __future__ import annotations

import json
import re

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text, tool_calls

NEEDLE = "NEEDLE-7731 connection refused by db:5432"
COMMAND = (
    'python3 -c "import sys\n'
    "for i in range(40000): print(f'log line {i} ' + 'x' * 40)\n"
    "print('NEEDLE-' + str(7000 + 731) + ' connection refused by db:5432')\n"
    "for i in range(40000, 44000): print(f'log line {i} ' + 'x' * 40)\""
)
REF = re.compile(r"art-[0-9a-f]{16}")


async def test_a_big_output_is_sent_as_a_ref_and_grepped(server, open_runtime):
    def grep_the_ref(request):
        tool_message = [m for m in request["messages"] if m["role"] == "tool"][-1]
        ref = REF.search(tool_message["content"]).group(0)
        return tool_calls([("c2", "context-grep", {"id": ref, "pattern": "needle-\\d+", "contextLines": 1})])

    server.add(
        tool_calls([("c1", "terminal-execute", {"command": COMMAND})]),
        grep_the_ref,
        text("The database refused the connection."),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("why does the service fail?"))
        stored = [m for m in await runtime.history() if m.role == "tool"]
    finally:
        await runtime.close()

    # The stored result holds all of it (about 2 MB); the request held a preview and the ref.
    assert len(stored[0].content) > 2_000_000 and NEEDLE in stored[0].content
    second = server.requests[1]["messages"]
    sent = [m for m in second if m["role"] == "tool"][-1]["content"]
    assert len(sent) < 3_000 and NEEDLE not in sent
    assert REF.search(sent) and "context-grep" in sent
    assert "log line 0 " in sent and "log line 43999 " in sent  # first and last lines

    # The grep found the line, with its number and neighbours, in a bounded result.
    result = json.loads(stored[1].content)
    assert stored[1].status == "ok" and result["totalMatches"] == 1
    [match] = result["matches"]
    assert match["content"] == NEEDLE and match["line"] == 40001
    assert match["before"] == ["log line 39999 " + "x" * 40] and match["after"] == ["log line 40000 " + "x" * 40]
    third = server.requests[2]["messages"]
    assert NEEDLE in [m for m in third if m["role"] == "tool"][-1]["content"]


async def test_bad_ids_and_patterns_are_clear_errors_for_the_model(server, open_runtime):
    server.add(
        tool_calls(
            [
                ("c1", "context-read", {"id": "../../etc/passwd"}),
                ("c2", "context-tail", {"id": "art-0123456789abcdef"}),
                ("c3", "context-list", {}),
            ]
        ),
        text("Nothing there."),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("look around"))
        results = [m for m in await runtime.history() if m.role == "tool"]
    finally:
        await runtime.close()
    bad_path, unknown, listing = results
    assert bad_path.status == "error" and bad_path.content.startswith("Error:")
    assert unknown.status == "error" and "art-0123456789abcdef" in unknown.content
    assert listing.status == "ok" and json.loads(listing.content)["items"][0]["kind"] == "catalog"


async def test_export_then_import_elsewhere_rebuilds_the_same_context_files(tmp_path):
    """Seed 004 backup/import: the files are rebuilt from the imported messages, byte for byte."""
    import hashlib

    from agent.context.files.manager import ContextFiles
    from agent.session.export import export_jsonl
    from agent.session.importers import import_session, parse_any
    from agent.session.models import Message, ToolCall
    from agent.session.store import Store
    from agent.settings.schema import Settings

    settings = Settings().context
    log = "".join(f"step {i}: ok\n" for i in range(20_000)) + "step 20000: FAILED\n"
    here = await Store.open(tmp_path / "a.db")
    session = await here.create_session(cwd=str(tmp_path))
    call = ToolCall(id="c1", name="terminal-execute", arguments=json.dumps({"command": "make"}))
    await here.append(session, Message(role="user", content="build it"))
    await here.append(session, Message(role="assistant", tool_calls=[call]))
    await here.append(
        session,
        Message(
            role="tool",
            tool_call_id="c1",
            tool_name="terminal-execute",
            content=json.dumps({"command": "make", "stdout": log, "stderr": "", "exitCode": 2}),
        ),
    )
    files = ContextFiles(here, session.id, settings=settings, root=tmp_path / "ctx-a")
    [ref] = await files.list(kind="artifact")
    original = await files.tail(ref.id, lines=1)
    exported = export_jsonl(session, await here.all_messages(session.id))
    await here.close()

    there = await Store.open(tmp_path / "b.db")
    copy = await import_session(there, parse_any(exported), cwd_default="/x")
    files_there = ContextFiles(there, copy.id, settings=settings, root=tmp_path / "ctx-b")
    [ref_there] = await files_there.list(kind="artifact")
    assert ref_there.id == ref.id and ref_there.byteSize == ref.byteSize
    assert (await files_there.tail(ref.id, lines=1)).content == original.content == "step 20000: FAILED\n"

    def digest(root):
        [path] = [p for p in root.rglob("*") if p.is_file() and "artifacts" in p.parts]
        return hashlib.sha256(path.read_bytes()).hexdigest()

    assert digest(tmp_path / "ctx-a") == digest(tmp_path / "ctx-b")
    await there.close()
