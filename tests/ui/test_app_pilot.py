"""CairnApp driven through Textual's pilot against the scripted OpenAI-compatible server."""

from __future__ import annotations

import asyncio

from agent.ui.app import CairnApp
from agent.ui.screens.approval import ApprovalScreen
from agent.ui.widgets.chat import AssistantMessage, Notice, ToolBlock, UserMessage
from agent.ui.widgets.no_model import NoModelPanel
from tests.fakes.llm_server import error, hang, rate_limited, text, tool_calls
from tests.ui.conftest import chat_text, run_prompt, send, wait_for, wait_ready

SIZE = (120, 36)


async def test_streamed_answer_and_status(make_settings, server):
    server.add(text("Hello from the **fake** model [not markup]", chunk_size=3))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.runtime is not None
        await run_prompt(pilot, "say hello")
        users = list(app.chat.query(UserMessage))
        assert [u.text for u in users] == ["say hello"]
        answers = app.chat.assistant_messages
        assert len(answers) == 1
        assert answers[0].text == "Hello from the **fake** model [not markup]"
        assert answers[0].query_one("Markdown").source == answers[0].text
        status = app.status.render_text().plain
        assert "openai/fake" in status and "say hello" in status  # model and session title
        assert "%" in status and "price unknown" in status  # openai/fake has no price: not "$0.0000"
        assert app.prompt.text == ""


async def test_tool_call_then_answer(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(
        tool_calls([("c1", "filesystem-read", '{"filePath": "a.py"}')]),
        text("The file sets x to 1."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "what is in a.py?")
        blocks = app.chat.tool_blocks
        assert len(blocks) == 1
        block = blocks[0]
        assert block.call.name == "filesystem-read"
        assert "filesystem-read" in block.query_one(".tool-header").render().plain
        assert "a.py" in block.query_one(".tool-header").render().plain
        assert block.result is not None and block.result.status == "ok"
        assert block.summary == "1 line"
        assert block.query_one("Collapsible").collapsed
        assert app.chat.assistant_messages[-1].text == "The file sets x to 1."
        # The collapsed output is built on first expand (hidden bodies cost layout time).
        assert not block.query(".tool-output")
        block.query_one("Collapsible").collapsed = False
        await pilot.pause()
        assert "x = 1" in block.query_one(".tool-output").render().plain


async def test_approval_modal_runs_command_on_yes(make_settings, server):
    server.add(
        tool_calls([("c1", "terminal-execute", '{"command": "touch ran && echo approved-run"}')]),
        text("It ran."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "run it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        assert "touch ran && echo approved-run" in app.screen.query_one("#approval-detail").render().plain
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        block = app.chat.tool_blocks[0]
        assert "approved-run" in (block.result.content or "")
        assert block.summary.startswith("exit 0")
        assert app.chat.assistant_messages[-1].text == "It ran."


async def test_approval_denied_with_n(make_settings, server):
    server.add(
        tool_calls([("c1", "terminal-execute", '{"command": "touch nope"}')]),
        text("Understood."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "run it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        block = app.chat.tool_blocks[0]
        assert block.summary.startswith("Error:")
        assert block.has_class("-error")


async def test_edit_shows_diff(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(
        tool_calls(
            [("c1", "filesystem-edit", '{"filePath": "a.py", "searchContent": "x = 1", "replaceContent": "x = 2"}')]
        ),
        text("Edited."),
    )
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "change x")
        block = app.chat.tool_blocks[0]
        assert block.summary == "+1 −1"
        diff = block.query_one(".tool-diff").render().plain
        assert "-x = 1" in diff and "+x = 2" in diff
        assert (workspace / "a.py").read_text() == "x = 2\n"


async def test_escape_interrupts_a_hanging_stream(make_settings, server):
    server.add(hang(30, text="thinking"), text("after the interrupt"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "take your time")
        await wait_for(
            pilot,
            lambda: app.chat.assistant_messages and app.chat.assistant_messages[0].text == "thinking",
            what="the first chunk",
        )
        assert app.turn_running
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, timeout=5, what="the interrupt")
        assert "Interrupted" in chat_text(app)
        await run_prompt(pilot, "again")
        assert app.chat.assistant_messages[-1].text == "after the interrupt"


async def test_slash_popup_and_help(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        popup = app.prompt.popup
        await pilot.press("slash")
        await pilot.pause()
        assert popup.visible and popup.option_count >= 4
        await pilot.press("h", "e")
        await pilot.pause()
        assert popup.option_count == 1 and popup.selected_name == "help"
        await pilot.press("escape")
        await pilot.pause()
        assert not popup.visible
        await pilot.press("l", "p")  # "/help" again: the popup reopens
        await pilot.pause()
        assert popup.visible
        await pilot.press("enter")
        await pilot.pause()
        help_notices = [n for n in app.chat.query(Notice) if n.kind == "help"]
        assert help_notices and "/model" in help_notices[0].text and "Ctrl+J" in help_notices[0].text
        assert server.requests == []  # commands never reach the model


async def test_tab_completes_and_model_command(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("slash", "m", "o", "tab")
        await pilot.pause()
        assert app.prompt.text == "/model "
        await pilot.press(*"openai/other")
        await pilot.press("enter")
        await pilot.pause()
        assert app.runtime.model == "openai/other"


async def test_unknown_command_is_a_notice(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/frobnicate now")
        assert "Unknown command /frobnicate" in chat_text(app)
        assert server.requests == []


async def test_new_clears_the_chat(make_settings, server):
    server.add(text("first answer"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "first")
        old_session = app.runtime.session.id
        await send(pilot, "/new")
        await wait_for(pilot, lambda: not app.chat.query(UserMessage), what="the chat to clear")
        assert app.runtime.session.id != old_session
        assert "new session" in app.status.render_text().plain


async def test_no_model_shows_how_to_set_one(workspace):
    from agent.settings.config import load_settings

    app = CairnApp(load_settings(workspace))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.no_model and app.runtime is None
        panel = app.chat.query_one(NoModelPanel)
        body = panel.render().plain
        assert "cairn --model openai/gpt-4o" in body
        assert "ANTHROPIC_API_KEY" in body and "CAIRN_MODEL" in body and "config.toml" in body
        await send(pilot, "hello?")
        assert "No model configured" in chat_text(app)
        assert app.prompt.text == "hello?"  # not sent: kept (issue 32)
        await pilot.press("ctrl+c", "ctrl+c")  # the draft, then nothing to lose: quit
        await wait_for(pilot, lambda: app._exit, what="the app to exit")


async def test_provider_error_is_readable(make_settings, server):
    server.add(error(401))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hi")
        errors = [n for n in app.chat.query(Notice) if n.kind == "error"]
        assert errors, chat_text(app)
        assert "Traceback" not in errors[0].text
        assert "key" in errors[0].text.lower()
        server.add(text("recovered"))
        await run_prompt(pilot, "again")
        assert app.chat.assistant_messages[-1].text == "recovered"


async def test_retry_countdown_in_status(make_settings, server):
    server.add(rate_limited(retry_after=1), text("made it"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "hi")
        await wait_for(pilot, lambda: "Retrying in" in app.status.render_text().plain, what="the retry countdown")
        assert "(attempt 1/" in app.status.render_text().plain
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        assert app.chat.assistant_messages[-1].text == "made it"


async def test_prompt_sent_while_starting_runs_when_ready(make_settings, server):
    server.add(text("queued answer"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "early")  # usually before the runtime is open
        await wait_ready(pilot)
        await wait_for(pilot, lambda: app.chat.assistant_messages and not app.turn_running, what="the answer")
        await app.workers.wait_for_complete()
        assert app.chat.assistant_messages[-1].text == "queued answer"


async def test_ctrl_c_twice_quits_when_idle(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app._exit
        assert "Ctrl+C again" in (app.status.flashed or "")  # in the status line, not over the prompt
        assert not app._notifications
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app._exit, what="the app to exit")


async def test_resumed_session_shows_history(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(tool_calls([("c1", "filesystem-read", '{"filePath": "a.py"}')]), text("x is one."))
    first = CairnApp(make_settings())
    async with first.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "read a.py")
        await first.quit_app()

    again = CairnApp(make_settings(), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: again.chat.query(ToolBlock), what="history")
        await pilot.pause()
        assert [u.text for u in again.chat.query(UserMessage)] == ["read a.py"]
        assert again.chat.query(AssistantMessage).last().text == "x is one."
        block = again.chat.query_one(ToolBlock)
        assert block.result is not None and block.summary == "1 line"
        assert "read a.py" in again.status.render_text().plain


async def test_settings_warnings_are_notified(make_settings, server):
    """In the chat, where they stay (issue 32): a toast covered the prompt, then went."""
    from agent.ui.widgets.chat import Notice

    app = CairnApp(make_settings())
    app.config_warnings = ["Config value llm.max_retries ignored: bad [value]"]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = [n.text for n in app.chat.query(Notice) if n.kind == "warning"]
        assert shown == ["Config value llm.max_retries ignored: bad [value]"]


async def test_ctrl_j_inserts_a_newline_and_enter_sends_both_lines(make_settings, server):
    server.add(text("two lines received"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("a", "ctrl+j", "b")
        await pilot.pause()
        assert app.prompt.text == "a\nb"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.chat.assistant_messages and not app.turn_running, what="the answer")
        assert [u.text for u in app.chat.query(UserMessage)] == ["a\nb"]
        assert server.requests[0]["messages"][-1]["content"] == "a\nb"


async def test_empty_prompt_does_nothing(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("space", "enter")
        await pilot.pause()
        assert not app.chat.query(UserMessage) and server.requests == []


async def test_ctrl_c_during_approval_interrupts_and_closes_the_modal(make_settings, server):
    server.add(tool_calls([("c1", "terminal-execute", '{"command": "touch never"}')]), text("next"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "run it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("ctrl+c")
        await wait_for(
            pilot,
            lambda: not app.turn_running and not isinstance(app.screen, ApprovalScreen),
            timeout=5,
            what="the interrupt",
        )
        await app.workers.wait_for_complete()
        assert "Interrupted" in chat_text(app)
        assert app.chat.tool_blocks[0].summary.startswith("Error:")
        assert not app._exit
        await run_prompt(pilot, "go on")
        assert app.chat.assistant_messages[-1].text == "next"


async def test_model_command_opens_the_runtime_when_none_was_configured(workspace, server):
    from agent.settings.config import load_settings

    app = CairnApp(load_settings(workspace, flags={"api_base": server.base_url, "api_key": "sk-test"}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.no_model
        await send(pilot, "/model openai/fake")
        await wait_for(pilot, lambda: app.runtime is not None, timeout=30, what="the runtime")
        assert not app.chat.query(NoModelPanel)
        server.add(text("now it works"))
        await run_prompt(pilot, "hello")
        assert app.chat.assistant_messages[-1].text == "now it works"


async def test_chat_keeps_a_bounded_number_of_widgets(make_settings, server):
    from agent.ui.widgets.chat import MAX_MOUNTED

    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        for i in range(MAX_MOUNTED + 50):
            app.chat.add_notice(f"line {i}")
        await pilot.pause()
        notices = list(app.chat.query(Notice))
        assert len(app.chat.children) <= MAX_MOUNTED
        assert notices[-1].text == f"line {MAX_MOUNTED + 49}"


async def test_arrows_move_in_the_popup(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("slash", "down", "down")
        await pilot.pause()
        assert app.prompt.popup.selected_name == "model"
        await pilot.press("up")
        await pilot.pause()
        assert app.prompt.popup.selected_name == "new"
        await pilot.press("tab")
        await pilot.pause()
        assert app.prompt.text == "/new " and not app.prompt.popup.visible


async def test_start_up_failure_is_a_readable_line(make_settings, server, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("CAIRN_HOME", str(blocker))  # the database cannot be created here
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.open_error and app.runtime is None
        errors = [n.text for n in app.chat.query(Notice) if n.kind == "error"]
        assert errors and errors[0].startswith("cairn could not start:")
        assert "Traceback" not in errors[0]
        await send(pilot, "/help")  # still usable
        assert any(n.kind == "help" for n in app.chat.query(Notice))


async def test_quitting_during_a_turn_closes_cleanly(make_settings, server):
    # The stream hangs far longer than the generous wait for the exit: quitting must not wait
    # for the model. No duration is asserted; the waits only catch a quit that hangs.
    hang_seconds, guard = 600, 120
    server.add(hang(hang_seconds, text="partial"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        runtime = app.runtime
        await send(pilot, "long job")
        await wait_for(pilot, lambda: app.chat.assistant_messages, what="the stream")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: app._exit, timeout=guard, what="the app to exit")
    assert app.runtime is None
    # The hanging stream was dropped by the client, not left running on the server.
    assert await asyncio.to_thread(server.wait_idle, guard), "the stream still runs after quitting"
    from agent.session.store import Store

    store = await Store.open()  # the same CAIRN_HOME: the partial answer was kept
    try:
        history = await store.active_path(runtime.session.id)
    finally:
        await store.close()
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[-1].content == "partial" and history[-1].status == "interrupted"


async def test_context_command_shows_the_pass_report(make_settings, server):
    server.add(text("an answer", prompt_tokens=321))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hello")
        await send(pilot, "/context")
        await wait_for(pilot, lambda: "condense at" in chat_text(app), what="the context report")
        report = next(n.text for n in app.chat.query(Notice) if "condense at" in n.text)
        for name in ("active_path", "orphans", "terminal_outdated", "file_reads", "externalize"):
            assert name in report
        assert "system prompt" in report and "provider reported 321" in report
        assert len(server.requests) == 1  # the report never calls the model
