"""Issue 18 gap: a long pasted prompt is shown collapsed in the chat ("[pasted 400 lines]"),
expandable with Ctrl+O or a click, and sent to the model whole."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.chat import UserMessage
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, wait_for, wait_ready

SIZE = (80, 24)
PASTED = "\n".join(f"2024-03-05 09:30:{i % 60:02d} worker-{i} ERROR connection reset" for i in range(400))


async def test_a_long_paste_is_collapsed_in_the_chat_and_sent_whole(make_settings, server):
    server.add(text("That log shows connection resets."), text("Short one."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "why these errors?\n" + PASTED)
        assert server.requests[0]["messages"][-1]["content"] == "why these errors?\n" + PASTED
        shown = app.chat.query(UserMessage).first()
        assert shown.collapsed
        rendered = str(shown.content)
        assert "[pasted 401 lines" in rendered and "worker-1 " in rendered and "worker-399" not in rendered
        assert shown.region.height < 10  # the chat is not pushed off screen

        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not shown.collapsed, what="Ctrl+O to expand it")
        assert "worker-399" in str(shown.content)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: shown.collapsed, what="Ctrl+O to collapse it again")

        await run_prompt(pilot, "one line\nand two")
        short = list(app.chat.query(UserMessage))[-1]
        assert not short.collapsible and str(short.content) == "one line\nand two"


async def test_a_long_paste_in_the_prompt_is_a_placeholder_and_sends_the_real_text(make_settings, server):
    """Issue 46 item 26: 60 pasted lines do not fill the input box; it shows Claude Code's
    `[Pasted text #1 +60 lines]`, and Enter sends what was pasted. Ctrl+Z and a history walk
    keep the placeholder standing for it."""
    from textual import events

    sixty = "\n".join(PASTED.split("\n")[:60])
    server.add(text("Read the sixty lines."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        prompt = app.prompt
        await pilot.press(*"look: ")
        app.post_message(events.Paste(sixty))  # as the driver delivers a bracketed paste
        await wait_for(pilot, lambda: "[Pasted text" in prompt.text, what="the paste")
        assert prompt.text == "look: [Pasted text #1 +60 lines]"
        assert prompt.region.height <= 3  # one row and its border, not ten
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: "[Pasted" not in prompt.text, what="Ctrl+Z to take the paste out")
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: "[Pasted text #1 +60 lines]" in prompt.text, what="Ctrl+Y to put it back")
        await pilot.press("enter")
        await wait_for(pilot, lambda: server.requests, what="the prompt to be sent")
        assert server.requests[0]["messages"][-1]["content"] == "look: " + sixty
        shown = app.chat.query(UserMessage).first()
        assert "[pasted 60 lines" in str(shown.content)  # the chat folds it as before
        assert prompt.prompt_history is not None and prompt.prompt_history.entries()[-1] == "look: " + sixty


async def test_a_short_paste_goes_in_as_it_is(make_settings, server):
    from textual import events

    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.post_message(events.Paste("two\nlines"))
        await wait_for(pilot, lambda: app.prompt.text, what="the paste")
        assert app.prompt.text == "two\nlines"


async def test_a_paste_ending_in_a_line_break_counts_its_lines_as_wc_does(make_settings, server):
    """A terminal paste of a file (`seq 60`) ends with a line break: 60 lines, not 61."""
    from textual import events

    sixty = "".join(f"line {n}\n" for n in range(1, 61))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.post_message(events.Paste(sixty))
        await wait_for(pilot, lambda: "[Pasted" in app.prompt.text, what="the paste")
        assert app.prompt.text == "[Pasted text #1 +60 lines]"
