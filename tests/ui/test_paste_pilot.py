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
