"""`/clear` (NewSession) reads the instruction files again, as Claude Code's does: a line added
with `# note` or an edit of AGENTS.md reaches the new session's requests, not the old one's."""

from __future__ import annotations

from agent.runtime.ops import NewSession, Prompt
from tests.fakes.llm_server import text


def system_of(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


async def test_a_new_session_reads_the_edited_memory_file(server, open_runtime, workspace):
    (workspace / "AGENTS.md").write_text("# Rules\n- keep it short\n")
    server.add(text("one"), text("two"), text("three"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("first"))
        (workspace / "AGENTS.md").write_text("# Rules\n- keep it short\n- always run ruff before committing\n")
        await runtime.submit(Prompt("same session"))
        await runtime.submit(NewSession())
        await runtime.submit(Prompt("after clear"))
    finally:
        await runtime.close()
    first, same, fresh = (system_of(r) for r in server.requests)
    assert "keep it short" in first and "always run ruff" not in first
    assert same == first  # the session's prompt (and its cached prefix) does not move under it
    assert "always run ruff before committing" in fresh
