"""Issue 28 in the TUI: a model's thinking streamed dimmed above its answer, folded to one
line ("Thought for N s") once the answer starts, opened and closed with Ctrl+O; a resumed
session shows the same line; /effort sets the effort the next request asks for, and the
status bar shows it. Through real litellm to the fakes (OpenAI-style `reasoning_content`,
and the Anthropic Messages API with signed thinking blocks)."""

from __future__ import annotations

import re

from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from agent.ui.widgets.thinking import ThinkingBlock
from tests.fakes.anthropic_server import Thinking, tool_use
from tests.fakes.anthropic_server import text as claude_text
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, send, wait_for, wait_ready

SIZE = (100, 30)
REASONING = "The user asks for six times seven. Six sevens are forty-two. I will say so plainly."
# The hint: Ctrl+O on the block that key opens, Ctrl+↑ on an older one (block_select.py).
TIMED = re.compile(r"✻ Thought for (<1|\d+) s · (Ctrl\+O to expand|Ctrl\+↑ to select)$")


def shown(block: ThinkingBlock) -> str:
    """What the block draws, as plain text."""
    return str(block.render())


def notices(app) -> list[str]:
    return [n.text for n in app.chat.query(Notice)]


async def test_streamed_thinking_folds_to_one_line_and_ctrl_o_opens_it(make_settings, server):
    server.add(text("Forty-two.", reasoning=REASONING, chunk_size=4))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "six times seven?")
        [answer] = app.chat.assistant_messages
        block = answer.thinking
        assert block is not None and block.display and block.has_class("thinking")
        assert block.seconds is not None  # it came as it streamed (timed), not from the stored message
        assert answer.text == "Forty-two."
        assert block.text == REASONING and block.collapsed and not block.streaming
        assert TIMED.fullmatch(shown(block)), shown(block)  # one line: the answer is under it
        await pilot.press("ctrl+o")
        assert not block.collapsed
        opened = shown(block)
        assert opened.startswith("✻ Thought for ") and "Ctrl+O to collapse" in opened and REASONING in opened
        await pilot.press("ctrl+o")
        assert block.collapsed and TIMED.fullmatch(shown(block))

        # Stored with its message: a resumed session shows the line (no timing: its length).
        session_id = app.runtime.session.id
    resumed = CairnApp(make_settings(), resume_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        line = f"✻ Thought ({len(REASONING.split())} words) · Ctrl+O to expand"
        await wait_for(
            pilot,
            lambda: [a.thinking and shown(a.thinking) for a in resumed.chat.assistant_messages] == [line],
            what="the stored thinking's line",
        )
        block = resumed.chat.assistant_messages[0].thinking
        assert block is not None and block.collapsed and block.seconds is None
        await pilot.press("ctrl+o")
        assert REASONING in shown(block)


async def test_thinking_shows_dimmed_while_it_streams_and_folds_when_the_answer_starts(tmp_path):
    """The loop's events, given one by one: the thinking is drawn as it arrives (the block
    redraws at most 10 times a second), and the answer's first text folds it at once."""
    from agent.turn import events as ev
    from tests.ui.test_snapshots import make_app

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.handle_event(ev.AssistantStarted(message_id="a1"))
        app.handle_event(ev.ThinkingDelta(message_id="a1", text="Six sevens "))
        [answer] = app.chat.assistant_messages
        block = answer.thinking
        assert block is not None
        await wait_for(pilot, lambda: shown(block) == "✻ Thinking…\nSix sevens ", what="the first piece drawn")
        app.handle_event(ev.ThinkingDelta(message_id="a1", text="are forty-two."))
        await wait_for(pilot, lambda: shown(block).endswith("Six sevens are forty-two."), what="the next piece")
        assert block.streaming and not block.collapsible and not answer.text
        assert not app.chat.toggle_output_in_view()  # nothing to fold while it streams

        app.handle_event(ev.TextDelta(message_id="a1", text="Forty-two."))
        assert block.collapsed
        await wait_for(pilot, lambda: TIMED.fullmatch(shown(block)), what="the folded line and its hint")
        assert app.chat.toggle_output_in_view() and not block.collapsed


async def test_claude_thinking_before_a_tool_call_keeps_its_line(anthropic_server, workspace):
    """Claude thinks, calls a tool (no text): the message keeps its thought line above the
    tool block; the answer after the result thinks again; Ctrl+O opens the newest."""
    from agent.settings.config import load_settings

    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        tool_use(
            [("toolu_1", "filesystem-read", {"filePath": "a.py"})],
            thinking=[Thinking("I should read a.py first.", "sig-1")],
            chunk_size=5,
        ),
        claude_text("x is 1.", thinking=[Thinking("It says x = 1.", "sig-2")]),
    )
    flags = {
        "model": "anthropic/claude-sonnet-4-5",
        "api_base": anthropic_server.base_url,
        "api_key": "sk-ant-test",
        "yolo": True,
        "llm": {"reasoning_effort": "high"},
    }
    app = CairnApp(load_settings(workspace, flags=flags))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: "effort high" in app.status.render_text().plain, what="the effort in the status")
        await run_prompt(pilot, "what is x?")
        first, second = app.chat.assistant_messages
        assert first.thinking is not None and first.thinking.text == "I should read a.py first."
        assert first.display and first.has_class("-no-text") and TIMED.fullmatch(shown(first.thinking))
        [tool] = app.chat.tool_blocks
        chat = list(app.chat.children)
        assert chat.index(first) < chat.index(tool) < chat.index(second)
        assert second.text == "x is 1." and second.thinking is not None and second.thinking.collapsed
        assert "sig-" not in shown(first.thinking) + shown(second.thinking)  # signatures never shown
        await pilot.press("ctrl+o")
        assert not second.thinking.collapsed and "It says x = 1." in shown(second.thinking)
        assert first.thinking.collapsed


async def test_effort_command_sets_the_next_request_and_the_status_bar(make_settings, server):
    model = "openai/gpt-5.1"  # a model litellm's price map lists as reasoning
    server.add(text("one"), text("two"))
    app = CairnApp(make_settings(model=model))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert "effort" not in app.status.render_text().plain

        await send(pilot, "/effort")
        choices = "off, minimal, low, medium, high, default"
        assert any("Effort: the model's default." in n and choices in n for n in notices(app))

        await send(pilot, "/effort high")
        assert app.runtime.chosen_effort == "high"
        assert any(n.startswith("Effort for this session: high.") for n in notices(app))
        assert " · effort high" in app.status.render_text().plain
        await run_prompt(pilot, "first")
        assert server.requests[-1]["reasoning_effort"] == "high"

        await send(pilot, "/effort default")
        assert app.runtime.chosen_effort is None
        assert "effort" not in app.status.render_text().plain
        await run_prompt(pilot, "second")
        assert "reasoning_effort" not in server.requests[-1]

        await send(pilot, "/effort lots")
        assert any("Unknown effort 'lots'" in n for n in notices(app))
        assert app.runtime.chosen_effort is None


async def test_effort_on_a_model_that_does_not_reason_says_so(make_settings, server):
    app = CairnApp(make_settings())  # openai/fake: not in the price map
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/effort low")
        assert app.runtime.chosen_effort == "low"
        assert any("not listed as a reasoning model" in n for n in notices(app))
        assert " · effort low" in app.status.render_text().plain


def test_the_collapsed_line_says_what_is_known():
    from agent.ui.widgets.thinking import thought_label

    assert thought_label("a b c", 12.4) == "Thought for 12 s"
    assert thought_label("a b c", 0.2) == "Thought for <1 s"  # one piece, or all at once
    assert thought_label("a b c", None) == "Thought (3 words)"  # stored: no timing to tell
    assert thought_label("hmm", None) == "Thought (1 word)"


async def test_thinking_known_only_when_the_message_finished_shows_its_line(tmp_path):
    """A message whose thinking came whole with the final message (no deltas) gets the line too."""
    from agent.session.models import Message
    from agent.turn import events as ev
    from tests.ui.test_snapshots import make_app

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.handle_event(ev.AssistantStarted(message_id="a1"))
        app.handle_event(ev.TextDelta(message_id="a1", text="Done."))
        finished = Message(id="a1", role="assistant", content="Done.", meta={"thinking": "Quick check first."})
        app.handle_event(ev.AssistantFinished(message=finished))
        await pilot.pause()
        [answer] = app.chat.assistant_messages
        assert answer.thinking is not None
        await wait_for(pilot, lambda: shown(answer.thinking).startswith("✻ Thought (3 words)"), what="the line")
