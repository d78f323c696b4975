"""Issue 28: the Markdown transcript (`cairn session export --format md`) quotes an assistant's
thinking, labelled, before its text and tool calls; never its signatures. The session comes
from a real turn through litellm to the Anthropic fake (thinking, a tool call, an answer)."""

from __future__ import annotations

from agent.runtime.opening import FrontEnd
from agent.runtime.runtime import Runtime
from agent.session.export import export_markdown
from agent.session.loading import load_session_messages
from agent.session.models import Message
from agent.settings.config import load_settings
from tests.fakes.anthropic_server import Thinking, text, tool_use

PLAN = "I should read a.py first.\n\n# not a heading: still quoted\nThen answer."


async def test_markdown_quotes_the_thinking_before_the_text(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        tool_use([("toolu_1", "filesystem-read", {"filePath": "a.py"})], thinking=[Thinking(PLAN, "SIGNATURE-1")]),
        text("x is 1.", thinking=[Thinking("It says x = 1.", "SIGNATURE-2")]),
    )
    flags = {
        "model": "anthropic/claude-sonnet-4-5",
        "api_base": anthropic_server.base_url,
        "api_key": "sk-ant-test",
        "yolo": True,
        "llm": {"reasoning_effort": "high"},
    }
    runtime = await Runtime.open(load_settings(workspace, flags=flags), FrontEnd(on_event=lambda e: None))
    try:
        await runtime.agent.run_turn("what is x?")
        md = export_markdown(runtime.session, await load_session_messages(runtime.store, runtime.session.id))
    finally:
        await runtime.close()

    quoted_plan = "> **Thinking**\n>\n> I should read a.py first.\n>\n> # not a heading: still quoted\n> Then answer."
    assert f"{quoted_plan}\n\n**Tool call** `filesystem-read` (`toolu_1`)" in md
    assert "> **Thinking**\n>\n> It says x = 1.\n\nx is 1." in md
    assert "SIGNATURE" not in md
    assert md.count("**Thinking**") == 2  # the user's prompt and the tool result have none


def test_an_answer_without_thinking_has_no_quote():
    from agent.session.models import Session

    session = Session(id="s1", title="t", cwd="/w", model="m")
    md = export_markdown(session, [Message(role="assistant", content="hi", meta={"thinking": "  "})])
    assert "Thinking" not in md and md.rstrip().endswith("hi")
