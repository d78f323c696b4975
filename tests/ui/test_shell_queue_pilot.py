"""`!command` while the agent works (issue 46 item 20): queued like a prompt, shown with its
`!` in the queue, run on its own once the turn ends (then what was queued after it goes to
the model); no toast over the queue's hint. Typing `!` first gives the prompt shell mode's
cue (border colour and a hint), as Claude Code's bash mode does."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.prompt import SHELL_HINT
from agent.ui.widgets.shell_block import ShellBlock
from tests.fakes.llm_server import hang, text
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

SIZE = (80, 24)


def shell_blocks(app) -> list[ShellBlock]:
    return list(app.chat.query(ShellBlock))


async def test_a_bang_command_sent_during_a_turn_runs_after_it(make_settings, server):
    # The first answer hangs a while (long enough to queue behind it), then finishes by itself.
    server.add(hang(seconds=5, text="working on it"), text("Saw the listing."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "a long question")
        await wait_for(pilot, lambda: app.turn_running and server.requests, READY_TIMEOUT, "the turn to start")
        await send(pilot, "!echo queued-shell-ran")
        await send(pilot, "and then this")
        assert app.prompt.text == ""  # not refused
        assert [i.shown for i in app.queued.items] == ["!echo queued-shell-ran", "and then this"]
        shown = str(app.queued.render())
        assert "!echo queued-shell-ran" in shown and "sent after this turn" in shown
        assert not app._notifications  # no toast over the queue's hint

        await wait_for(pilot, lambda: len(server.requests) == 2, READY_TIMEOUT, "the queued prompt")
        await wait_for(pilot, lambda: not app.turn_running, what="the last turn")
        [block] = shell_blocks(app)
        assert block.command == "echo queued-shell-ran" and "queued-shell-ran" in block.output
        users = [m for m in server.requests[1]["messages"] if m["role"] == "user"]
        assert "and then this" in str(users[-1]["content"])
        assert "queued-shell-ran" in str(server.requests[1]["messages"])  # its note, read with the prompt
        assert not app.queued.items


async def test_typing_a_bang_first_shows_shell_mode(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        before = app.prompt.styles.border_top
        await pilot.press("!", "l", "s")
        await pilot.pause()
        assert app.prompt.has_class("-shell") and app.prompt.border_subtitle == SHELL_HINT
        assert app.prompt.styles.border_top != before  # another colour
        await pilot.press("home", "delete")
        await pilot.pause()
        assert not app.prompt.has_class("-shell") and not app.prompt.border_subtitle
