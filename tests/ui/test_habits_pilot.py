"""The habits Claude Code users type without thinking, in the TUI against the fake server:
/init, `!command`, `@` completion and `@file` attachment, /clear, /cost, notifications."""

from __future__ import annotations

import json

from textual import events

from agent.ui.app import CairnApp
from agent.ui.screens.approval import ApprovalScreen
from agent.ui.widgets.prompt import PromptInput
from agent.ui.widgets.shell_block import ShellBlock
from tests.fakes.llm_server import hang, text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, chat_text, run_prompt, send, wait_for, wait_ready

SIZE = (100, 30)
KEY = "sk-habits-secret-4242"


def last_user_text(request: dict) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def shell_blocks(app) -> list[ShellBlock]:
    return list(app.chat.query(ShellBlock))


# -- /init ---------------------------------------------------------------------------------


async def test_init_asks_the_model_to_write_agents_md_and_the_write_asks_first(make_settings, server, workspace):
    (workspace / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    server.add(
        tool_calls([("c1", "filesystem-create", {"filePath": "AGENTS.md", "content": "# demo\n\nRun `pytest`.\n"})]),
        text("AGENTS.md now says how to run the tests."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/init")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the write's approval")
        assert not (workspace / "AGENTS.md").exists()  # nothing written before the user said yes
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()

        assert (workspace / "AGENTS.md").read_text().startswith("# demo")
        sent = last_user_text(server.requests[0])
        assert sent.startswith('<command name="init">') and "AGENTS.md" in sent and "CLAUDE.md" in sent
        assert "/init" in chat_text(app).split("\n")  # the chat shows what was typed, not the prompt
        assert "Study this project" not in chat_text(app)


# -- !command ------------------------------------------------------------------------------


async def test_bang_runs_the_command_unasked_and_the_model_sees_its_output(
    make_settings, server, workspace, monkeypatch
):
    monkeypatch.setenv("HABITS_KEY", KEY)
    (workspace / "hello.txt").write_text("hi from the file\n")
    server.add(text("It printed the file."))
    app = CairnApp(make_settings(api_key=KEY))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, '!cat hello.txt; echo "key=$HABITS_KEY"; echo oops >&2')
        await wait_for(pilot, lambda: shell_blocks(app) and shell_blocks(app)[0].finished, what="the command")
        await wait_for(pilot, lambda: not app.turn_running, what="the command to end")
        block = shell_blocks(app)[0]
        assert "hi from the file" in block.output and "oops" in block.output
        assert "key=\n" in block.output + "\n" and KEY not in block.output  # cairn's key is not in its environment
        assert not isinstance(app.screen, ApprovalScreen)
        assert server.requests == []  # the model was not asked anything

        await run_prompt(pilot, "what did it print?")
        messages = server.requests[0]["messages"]
        note = next(m["content"] for m in messages if "<bash-input>" in str(m.get("content")))
        assert '<bash-input>cat hello.txt; echo "key=$HABITS_KEY"; echo oops >&2</bash-input>' in note
        assert "<bash-stdout>hi from the file\nkey=</bash-stdout>" in note
        assert "<bash-stderr>oops</bash-stderr>" in note
        assert last_user_text(server.requests[0]) == "what did it print?"

        history = await app.runtime.history()
        stored = next(m for m in history if m.meta.get("shell"))
        assert stored.role == "user" and stored.kind == "note"

        # A resumed chat shows the note as output, not as a prompt.
        app.chat.clear_messages()
        await pilot.pause()
        app.chat.show_history(history)
        await pilot.pause()
        assert [b.command for b in shell_blocks(app)] == ['cat hello.txt; echo "key=$HABITS_KEY"; echo oops >&2']


async def test_bang_is_interrupted_by_escape_and_queued_while_a_turn_runs(make_settings, server, workspace):
    server.add(hang(seconds=60, text="thinking"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "!echo started; sleep 60")
        await wait_for(pilot, lambda: shell_blocks(app) and "started" in shell_blocks(app)[0].output, what="output")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the command to stop")
        block = shell_blocks(app)[0]
        assert block.status == "interrupted"
        stored = next(m for m in await app.runtime.history() if m.meta.get("shell"))
        assert stored.meta["shell"]["interrupted"] and "started" in stored.content

        await send(pilot, "a long question")
        await wait_for(pilot, lambda: app.turn_running and server.requests, READY_TIMEOUT, "the turn to start")
        await send(pilot, "!ls")
        assert [i.shown for i in app.queued.items] == ["!ls"]  # queued: it runs after the turn
        assert len(shell_blocks(app)) == 1
        await pilot.press("escape")  # interrupts the turn: the queue comes back, unsent
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to stop")
        assert app.prompt.text == "!ls" and len(shell_blocks(app)) == 1


# -- @ completion and attachment ---------------------------------------------------------------


async def test_at_completes_workspace_paths_fuzzily(make_settings, server, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "path_complete.py").write_text("x = 1\n")
    (workspace / "README.md").write_text("# readme\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("guide\n")
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        popup = app.query_one("#path-popup")
        app.prompt.insert("look at @pcm")
        await wait_for(pilot, lambda: popup.shown, what="the path popup")
        assert popup.selected_path == "src/path_complete.py"
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.prompt.text == "look at @src/path_complete.py ", what="the completion")
        await wait_for(pilot, lambda: not popup.shown, what="the popup to close")

        app.prompt.insert("and @rdm")
        await wait_for(pilot, lambda: popup.shown and popup.selected_path == "README.md", what="README.md")
        await pilot.press("enter")  # Enter inserts while the popup is open; it does not send
        await wait_for(pilot, lambda: app.prompt.text.endswith("and @README.md "), what="the second completion")
        assert server.requests == []

        app.prompt.insert("@do")
        await wait_for(pilot, lambda: popup.shown and popup.selected_path == "docs/", what="the folder")
        await pilot.press("tab")  # a folder stays open for its files
        await wait_for(pilot, lambda: popup.shown and popup.selected_path == "docs/guide.md", what="its file")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not popup.shown, what="Esc to close it")
        assert app.prompt.text.endswith("@docs/")


async def test_at_file_attaches_its_text_as_a_read(make_settings, server, workspace):
    (workspace / "notes.txt").write_text("MARKER-7731 is the answer\n")
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    server.add(text("The notes say MARKER-7731."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "what do @notes.txt and @blob.bin say?")
        messages = server.requests[0]["messages"]
        user_at = next(i for i, m in enumerate(messages) if m["role"] == "user" and "@notes.txt" in str(m["content"]))
        call, result = messages[user_at + 1], messages[user_at + 2]
        assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] == "filesystem-read"
        assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"filePath": "notes.txt"}
        assert result["role"] == "tool" and result["tool_call_id"] == call["tool_calls"][0]["id"]
        assert "1→MARKER-7731 is the answer" in result["content"]
        assert "blob.bin" not in json.dumps(messages[user_at + 1 :])  # the binary file is not attached
        shown = chat_text(app)
        assert "@blob.bin: a binary file; not attached." in shown
        block = app.chat.tool_blocks[0]  # shown as the read it is
        assert block.call.name == "filesystem-read" and "notes.txt" in block.call.arguments
        assert block.summary == "1 line"


# -- /clear, /cost ---------------------------------------------------------------------------


async def test_clear_starts_a_new_session(make_settings, server, workspace):
    server.add(text("Hello."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hi")
        first = app.runtime.session.id
        await run_prompt(pilot, "/clear")
        assert app.runtime.session.id != first
        assert not app.chat.children
        assert await app.runtime.history() == []


async def test_cost_shows_tokens_and_cost_by_model(make_settings, server, workspace):
    server.add(
        text("One.", prompt_tokens=1200, completion_tokens=34), text("Two.", prompt_tokens=1300, completion_tokens=5)
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "first")
        await run_prompt(pilot, "second")
        await run_prompt(pilot, "/cost")
        report = chat_text(app)
        assert "Input tokens        2,500" in report and "Output tokens       39" in report
        assert "openai/fake: price unknown · 2 requests · 2,500 in · 39 out" in report
        assert "Cache share" in report


# -- notifications ----------------------------------------------------------------------------


async def test_a_long_turn_and_an_approval_ring_unless_the_terminal_is_focused(make_settings, server, workspace):
    server.add(
        text("Done."),
        tool_calls([("c1", "terminal-execute", {"command": "touch made"})]),
        text("Made it."),
        text("Done again."),
        text("And again."),
    )
    app = CairnApp(make_settings(notify={"after_s": 0}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "quick")
        who = f"cairn ({workspace.name})"  # which cairn: the project's folder
        assert app.notifications_sent == [f"{who} finished: your turn"]  # no focus reported: always

        await send(pilot, "make it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the approval")
        assert app.notifications_sent[-1] == f"{who} needs your permission: Run command: touch made"
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        assert (workspace / "made").exists()
        rung = len(app.notifications_sent)

        app.post_message(events.AppFocus())
        await wait_for(pilot, lambda: app.focus_reported, what="the focus event")
        await run_prompt(pilot, "again")
        assert len(app.notifications_sent) == rung  # the user is looking at it: nothing

        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus, what="the blur event")
        app.prompt.post_message(PromptInput.Submitted("and again"))  # sent without a key press (that refocuses)
        await wait_for(pilot, lambda: len(app.notifications_sent) > rung, READY_TIMEOUT, "the bell")
        assert app.notifications_sent[-1] == f"{who} finished: your turn"
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()


async def test_notifications_can_be_turned_off_and_wait_for_after_s(make_settings, server, workspace):
    server.add(text("Done."), text("Done."))
    app = CairnApp(make_settings(notify={"enabled": False, "after_s": 0}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "quick")
        assert getattr(app, "notifications_sent", []) == []
    app = CairnApp(make_settings())  # after_s = 10: a quick turn is no reason to call the user
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "quick")
        assert getattr(app, "notifications_sent", []) == []
