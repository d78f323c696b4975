"""Keys with the prompt focused: page scrolling reaches the chat, Tab keeps the focus, Ctrl+C
clears a draft first, Up/Down walk the project's prompt history, Ctrl+O toggles an output."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.prompt_history import HISTORY_FILE
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, chat_text, run_prompt, send, wait_for, wait_ready

SIZE = (80, 24)


def fill_chat(app, lines: int = 60) -> None:
    for i in range(lines):
        app.chat.add_notice(f"line {i}")


async def test_page_keys_scroll_the_chat_not_the_prompt(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        fill_chat(app)
        app.prompt.insert("a draft\nof two lines")
        await wait_for(
            pilot,
            lambda: app.chat.max_scroll_y > 20 and app.chat.scroll_y == app.chat.max_scroll_y,
            what="the chat to overflow, anchored at the bottom",
        )
        bottom, cursor = app.chat.scroll_y, app.prompt.cursor_location
        await pilot.press("pageup")
        await wait_for(pilot, lambda: app.chat.scroll_y < bottom, what="PageUp to scroll the chat")
        await pilot.press("shift+pageup")
        await pilot.pause()
        assert app.chat.scroll_y < bottom - app.chat.scrollable_content_region.height
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: app.chat.scroll_y == 0, what="Ctrl+Home to reach the top")
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: app.chat.scroll_y > 0, what="PageDown to scroll down")
        await pilot.press("ctrl+end")
        await wait_for(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y, what="Ctrl+End")
        assert app.prompt.cursor_location == cursor and app.prompt.text == "a draft\nof two lines"
        assert app.focused is app.prompt


async def test_tab_outside_completion_keeps_the_focus_and_the_keys(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        fill_chat(app, 3)
        await pilot.press("h", "i", "tab", "shift+tab", "x")
        await pilot.pause()
        assert app.focused is app.prompt
        assert app.prompt.text == "hix"


async def test_ctrl_c_clears_a_draft_first_and_ctrl_z_brings_it_back(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.prompt.insert("half a thought")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.prompt.text == "" and not app._exit and app.status.flashed is None
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.prompt.text == "half a thought"
        await pilot.press("end", "ctrl+c", "ctrl+c")  # (undo selects what it restored) draft cleared, quit armed
        await pilot.pause()
        assert not app._exit and "Ctrl+C again" in (app.status.flashed or "")


async def test_up_and_down_walk_the_projects_history_across_restarts(make_settings, server, workspace, _isolated_home):
    server.add(text("one"), text("two"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "first prompt", READY_TIMEOUT)
        await run_prompt(pilot, "second\nprompt", READY_TIMEOUT)
        await app.quit_app()
    assert (_isolated_home / HISTORY_FILE).is_file()

    again = CairnApp(make_settings())
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        prompt = again.prompt
        prompt.insert("draft")
        await pilot.press("up")
        await pilot.pause()
        assert prompt.text == "second\nprompt" and prompt.cursor_location == (0, 0)
        await pilot.press("up")
        await pilot.pause()
        assert prompt.text == "first prompt"
        await pilot.press("up")  # the oldest: stays
        await pilot.pause()
        assert prompt.text == "first prompt"
        await pilot.press("down")
        await pilot.pause()
        assert prompt.text == "second\nprompt" and prompt.cursor_location == (1, 6)
        await pilot.press("down")
        await pilot.pause()
        assert prompt.text == "draft"


async def test_history_is_per_project(make_settings, server, workspace, tmp_path):
    from agent.settings.config import load_settings

    server.add(text("one"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "only here", READY_TIMEOUT)
        await app.quit_app()
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = CairnApp(
        load_settings(other, flags={"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test"})
    )
    async with elsewhere.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("up")
        await pilot.pause()
        assert elsewhere.prompt.text == ""


async def test_ctrl_o_expands_and_collapses_the_output_in_view(make_settings, server):
    server.add(
        tool_calls([("c1", "terminal-execute", '{"command": "printf \\"a\\\\nb\\\\nc\\\\n\\""}')]), text("Printed.")
    )
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "print", READY_TIMEOUT)
        from textual.widgets import Collapsible

        collapsible = app.chat.tool_blocks[-1].query_one(Collapsible)
        assert collapsible.collapsed
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not collapsible.collapsed, what="Ctrl+O to expand")
        await wait_for(pilot, lambda: app.chat.tool_blocks[-1].query(".tool-output"), what="the output body")
        assert "a\nb\nc" in str(app.chat.tool_blocks[-1].query_one(".tool-output").render())
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: collapsible.collapsed, what="Ctrl+O to collapse")
        assert app.focused is app.prompt


def gated(answer: str):
    """A step that answers only once the test opens the gate (the turn runs until then)."""
    import threading

    gate = threading.Event()

    def step(request):
        gate.wait(READY_TIMEOUT)
        return text(answer)

    return gate, step


async def test_enter_while_working_queues_and_sends_when_the_turn_ends(make_settings, server):
    gate, first = gated("first answer")
    server.add(first, text("second answer"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "first")
        await wait_for(pilot, lambda: app.turn_running, what="the turn to start")
        await send(pilot, "second")
        assert app.queued.display and [q.shown for q in app.queued.items] == ["second"]
        assert "second" not in chat_text(app)
        await send(pilot, "third")
        await pilot.press("up")  # takes the newest back for editing
        await pilot.pause()
        assert app.prompt.text == "third" and [q.shown for q in app.queued.items] == ["second"]
        await pilot.press("ctrl+c")  # (a draft: cleared)
        gate.set()
        await wait_for(pilot, lambda: "second answer" in chat_text(app), READY_TIMEOUT, "the queued turn")
        await wait_for(pilot, lambda: not app.turn_running, what="the second turn to end")
        assert not app.queued.display
        assert server.requests[1]["messages"][-1]["content"] == "second"


async def test_esc_interrupts_and_gives_the_queue_back_to_the_prompt(make_settings, server):
    from tests.fakes.llm_server import hang

    server.add(hang(READY_TIMEOUT, text="thinking"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "first")
        await wait_for(pilot, lambda: app.turn_running, what="the turn to start")
        await send(pilot, "queued one")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")
        await wait_for(pilot, lambda: app.prompt.text == "queued one", what="the queue back in the prompt")
        assert not app.queued.items and len(server.requests) == 1


async def test_a_commands_output_is_shown_when_the_chat_was_scrolled_up(make_settings):
    """/context's report landed below the view of a chat scrolled up, as if nothing happened."""
    from agent.ui.widgets.chat import Notice

    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        fill_chat(app)
        await wait_for(pilot, lambda: app.chat.max_scroll_y > 20, what="the chat to overflow")
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: app.chat.scroll_y == 0, what="the top")
        await send(pilot, "/context")
        await wait_for(
            pilot,
            lambda: "pass" in (list(app.chat.query(Notice))[-1].text if app.chat.query(Notice) else ""),
            what="the /context report",
        )
        report = list(app.chat.query(Notice))[-1]
        await wait_for(
            pilot,
            lambda: app.chat.scroll_y == app.chat.max_scroll_y and report.region.y < app.chat.region.bottom,
            what="the report on screen",
        )
