"""Session UI with Pilot: the picker (/resume, `--resume` without an id), rewind (ESC ESC),
/rename, /fork, /export — against the scripted LLM server, a real runtime and database."""

from __future__ import annotations

from pathlib import Path

from agent.ui.app import CairnApp
from agent.ui.commands.export import parse_args
from agent.ui.screens.picker import SessionPicker, relative_age, short_folder
from agent.ui.screens.rewind import RestoreScreen, RewindScreen
from agent.ui.widgets.chat import Notice, UserMessage
from tests.fakes.llm_server import hang, text, tool_calls
from tests.ui.conftest import chat_text, run_prompt, send, wait_for, wait_ready

SIZE = (120, 36)


async def seed(workspace, rows: list[tuple[str, str, str]]) -> list[str]:
    """Sessions (title, first prompt, answer) written oldest first; returns their ids. Writes
    in the same millisecond still list newest first: the store breaks the tie by write order."""
    from agent.session.models import Message
    from agent.session.store import Store

    store = await Store.open()
    ids = []
    try:
        for title, prompt, answer in rows:
            session = await store.create_session(cwd=str(workspace), model="openai/fake", title=title)
            await store.append(session, Message(role="user", content=prompt))
            await store.append(session, Message(role="assistant", content=answer))
            ids.append(session.id)
    finally:
        await store.close()
    return ids


def user_texts(app) -> list[str]:
    return [u.text for u in app.chat.query(UserMessage)]


def notices(app) -> list[str]:
    return [n.text for n in app.chat.query(Notice)]


def listed(picker: SessionPicker) -> list[str]:
    return [o.id for o in picker.options.options]


async def open_picker(pilot) -> SessionPicker:
    app = pilot.app
    await send(pilot, "/resume")
    await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), what="the picker")
    await pilot.pause()
    return app.screen


async def type_filter(pilot, value: str) -> None:
    picker = pilot.app.screen
    picker.query_one("#picker-filter").value = ""
    await pilot.pause()
    if value:
        await pilot.press(*value)
    await pilot.pause()


# -- pure helpers --------------------------------------------------------------------------
def test_relative_age():
    now = 1_700_000_000.0
    ms = lambda seconds_ago: int((now - seconds_ago) * 1000)  # noqa: E731
    assert relative_age(ms(5), now) == "just now"
    assert relative_age(ms(3 * 60 + 5), now) == "3 min ago"
    assert relative_age(ms(5 * 3600), now) == "5 h ago"
    assert relative_age(ms(30 * 3600), now) == "yesterday"
    assert relative_age(ms(5 * 86400 + 60), now) == "5 d ago"
    assert relative_age(ms(90 * 86400), now).count("-") == 2  # a date


def test_short_folder():
    assert short_folder(str(Path.home() / "code" / "x")) == "~/code/x"
    long = "/" + "/".join(["segment"] * 10)
    assert len(short_folder(long)) == 30 and short_folder(long).startswith("…")


def test_export_args(tmp_path):
    assert parse_args("", tmp_path) == ("md", None)
    assert parse_args("jsonl", tmp_path) == ("jsonl", None)
    assert parse_args("out.jsonl", tmp_path) == ("jsonl", tmp_path / "out.jsonl")
    assert parse_args("md notes/a b.md", tmp_path) == ("md", tmp_path / "notes/a b.md")
    assert parse_args("jsonl /tmp/x.txt", tmp_path) == ("jsonl", Path("/tmp/x.txt"))


# -- picker --------------------------------------------------------------------------------
async def test_picker_lists_filters_and_opens(make_settings, server, workspace):
    alpha, beta, gamma = await seed(
        workspace,
        [
            ("alpha", "fix the parser", "parser fixed"),
            ("beta", "write the docs", "docs written"),
            ("", "Refactor the LOADER", "loader refactored"),
        ],
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        picker = await open_picker(pilot)
        # Newest first; the fresh (empty) session of this run is not listed.
        assert listed(picker) == [gamma, beta, alpha]
        first = str(picker.options.get_option_at_index(0).prompt)
        assert "untitled" in first and "Refactor the LOADER" in first and "2 messages" in first
        assert "just now" in first and workspace.name not in first  # one folder for all: in the title
        assert workspace.name in str(picker.query_one("#picker-title").content)
        assert "Ctrl+D" in picker.hint_text and "Esc" in picker.hint_text

        await type_filter(pilot, "loader")  # first prompt, case-insensitive
        assert listed(picker) == [gamma]
        await type_filter(pilot, "BET")  # title
        assert listed(picker) == [beta]
        await type_filter(pilot, alpha[:8])  # id
        assert listed(picker) == [alpha]
        await type_filter(pilot, workspace.name)  # folder
        assert len(listed(picker)) == 3
        await type_filter(pilot, "nothing like this")
        assert listed(picker) == [] and "0 of 3" in str(picker.query_one("#picker-title").content)

        await type_filter(pilot, "")
        await pilot.press("down")  # the filter keeps focus; the list moves
        assert picker.highlighted_id == beta
        assert picker.focused is picker.query_one("#picker-filter")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker), what="the picker to close")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: user_texts(app) == ["write the docs"], what="the opened history")
        assert app.runtime.session.id == beta
        assert "docs written" in chat_text(app)
        assert "beta" in app.status.render_text().plain

        server.add(text("more docs"))
        await run_prompt(pilot, "and the changelog")
        sent = [m.get("content") for m in server.requests[-1]["messages"]]
        assert "write the docs" in sent and "and the changelog" in sent
        assert len(await app.runtime.history()) == 4


async def test_picker_deletes_with_ctrl_d_twice_and_d_in_the_list(make_settings, server, workspace):
    alpha, beta, gamma = await seed(workspace, [("alpha", "a", "A"), ("beta", "b", "B"), ("gamma", "c", "C")])
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        picker = await open_picker(pilot)
        assert picker.highlighted_id == gamma
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert "press Ctrl+D again to delete gamma" in picker.hint_text
        assert listed(picker) == [gamma, beta, alpha]
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: listed(picker) == [beta, alpha], what="gamma to go")
        assert "Deleted gamma" in picker.hint_text

        # A first press, then moving away, cancels.
        await pilot.press("ctrl+d", "down")
        await pilot.pause()
        assert "again" not in picker.hint_text
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert "delete alpha" in picker.hint_text

        # `d` in the filter is a letter; in the list it deletes (twice).
        await type_filter(pilot, "d")
        assert picker.query_one("#picker-filter").value == "d"
        await type_filter(pilot, "")
        await pilot.press("tab")
        await pilot.pause()
        assert picker.focused is picker.options
        assert picker.highlighted_id == beta
        await pilot.press("d")
        await pilot.pause()
        assert "press d again to delete beta" in picker.hint_text
        await pilot.press("d")
        await wait_for(pilot, lambda: listed(picker) == [alpha], what="beta to go")

        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker), what="the picker to close")
        remaining = [s.session.id for s in await app.runtime.list_sessions()]
        assert alpha in remaining and beta not in remaining and gamma not in remaining


async def test_resume_without_id_opens_the_picker_over_a_new_session(make_settings, server, workspace):
    (old,) = await seed(workspace, [("old work", "the old prompt", "the old answer")])
    app = CairnApp(make_settings(), resume_id="")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.is_mounted, what="the picker"
        )
        await pilot.pause()
        fresh = app.runtime.session.id
        assert fresh != old and listed(app.screen) == [old]
        await pilot.press("escape")  # stays in the fresh session
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionPicker), what="the picker to close")
        assert app.runtime.session.id == fresh and user_texts(app) == []
        assert app.focused is app.prompt

        picker = await open_picker(pilot)
        await pilot.press(*"old")
        await pilot.press("enter")
        await wait_for(pilot, lambda: user_texts(app) == ["the old prompt"], what="the old history")
        assert app.runtime.session.id == old and picker is not app.screen


async def test_resume_with_no_saved_session_is_a_notice(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/sessions")
        await wait_for(pilot, lambda: "No saved sessions yet." in notices(app), what="the notice")
        assert not isinstance(app.screen, SessionPicker)


# -- rewind --------------------------------------------------------------------------------
def edit(call_id: str, old: str, new: str):
    return tool_calls(
        [(call_id, "filesystem-edit", f'{{"filePath": "a.py", "searchContent": "{old}", "replaceContent": "{new}"}}')]
    )


async def esc_esc(pilot) -> None:
    await pilot.press("escape", "escape")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, RewindScreen), what="the rewind menu")
    await pilot.pause()


async def test_rewind_conversation_and_files_then_new_branch(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(edit("c1", "x = 1", "x = 2"), text("Now 2."), edit("c2", "x = 2", "x = 3"), text("Now 3."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "make x two")
        await run_prompt(pilot, "make x three")
        assert (workspace / "a.py").read_text() == "x = 3\n"
        session_id = app.runtime.session.id

        await esc_esc(pilot)
        menu = app.screen
        rows = [str(o.prompt) for o in menu.query_one("#rewind-list").options]
        assert "make x three" in rows[0] and "make x two" in rows[1]  # newest first
        assert "1 file changed" in rows[0] and "1 file changed" in rows[1]
        assert rows[0][:5].count(":") == 1  # HH:MM
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the restore step")
        files = str(app.screen.query_one("#restore-files").content)
        assert "restore" in files and "a.py" in files
        choices = [str(o.prompt) for o in app.screen.query_one("#restore-choices").options]
        assert [c.split("  ")[0] for c in choices] == ["Conversation and files", "Conversation only", "Cancel"]
        await pilot.press("enter")  # the first choice: conversation and files
        await wait_for(pilot, lambda: app.prompt.text == "make x two", what="the old prompt back in the input")
        await app.workers.wait_for_complete()
        assert (workspace / "a.py").read_text() == "x = 1\n"
        assert user_texts(app) == []
        assert any("Restored: a.py" in n for n in notices(app))
        assert app.focused is app.prompt

        # The next turn starts a new branch; the old one stays in the database.
        app.prompt.text = ""
        server.add(text("A new start."))
        await run_prompt(pilot, "make x four instead")
        history = await app.runtime.history()
        assert [m.content for m in history if m.role == "user"] == ["make x four instead"]
        stored = await app.runtime.store.all_messages(session_id)
        assert len(stored) > len(history)
        assert sum(m.role == "user" for m in stored) == 3

        # The abandoned branch is offered, and switching back shows it again.
        await esc_esc(pilot)
        options = app.screen.query_one("#rewind-list").options
        labels = [str(o.prompt) for o in options]
        assert "Other branches" in labels
        branch_index = next(i for i, o in enumerate(options) if (o.id or "").startswith("branch:"))
        assert "make x three" in labels[branch_index]
        app.screen.query_one("#rewind-list").highlighted = branch_index
        await pilot.press("enter")
        # Its file changes were undone by the rewind: re-applying them is offered (f), not imposed.
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the re-apply offer")
        await pilot.press("c")
        await wait_for(pilot, lambda: user_texts(app) == ["make x two", "make x three"], what="the old branch")
        await app.workers.wait_for_complete()
        assert (workspace / "a.py").read_text() == "x = 1\n"  # conversation only: files untouched
        assert any("Files were left as they are" in n for n in notices(app))


async def test_rewind_conversation_only_and_without_file_changes(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(text("hello"), edit("c1", "x = 1", "x = 2"), text("Now 2."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await pilot.press("escape", "escape")  # nothing to rewind yet
        await wait_for(pilot, lambda: any("Nothing to rewind" in n for n in notices(app)), what="the notice")
        assert not isinstance(app.screen, RewindScreen)

        await run_prompt(pilot, "just talk")
        await run_prompt(pilot, "now edit")
        await esc_esc(pilot)
        await pilot.press("enter")  # newest: "now edit", one file changed → second step
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the restore step")
        await pilot.press("c")  # conversation only
        await wait_for(pilot, lambda: app.prompt.text == "now edit", what="the prompt")
        await app.workers.wait_for_complete()
        assert (workspace / "a.py").read_text() == "x = 2\n"
        assert user_texts(app) == ["just talk"]
        assert any("Files were left as they are" in n for n in notices(app))

        app.prompt.text = ""
        await esc_esc(pilot)
        await pilot.press("enter")  # "just talk" changed no file: rewinds at once
        await wait_for(pilot, lambda: app.prompt.text == "just talk", what="the prompt")
        await app.workers.wait_for_complete()
        assert user_texts(app) == [] and not isinstance(app.screen, (RewindScreen, RestoreScreen))

        # Cancel in the second step changes nothing.
        app.prompt.text = ""
        await esc_esc(pilot)
        assert [o.id.split(":")[0] for o in app.screen.query_one("#rewind-list").options if o.id] == [
            "header",
            "branch",
        ]  # no turns left on this path, one other branch
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, RewindScreen), what="the menu to close")
        assert app.prompt.text == ""


async def test_escape_while_working_interrupts_and_does_not_open_the_menu(make_settings, server):
    server.add(text("first"), hang(30, text="thinking"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "one")
        await send(pilot, "two")
        await wait_for(pilot, lambda: app.chat.assistant_messages[-1].text == "thinking", what="the stream")
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")
        # A key pressed after the two escapes reaches the prompt only once the app handled both
        # (keys are handled in order): the moment a menu would have been opened has passed.
        typed = app.prompt.text + "x"
        await pilot.press("x")
        await wait_for(pilot, lambda: app.prompt.text == typed, what="the key after the escapes")
        assert not isinstance(app.screen, RewindScreen)
        assert not [w for w in app.workers if w.group == "sessions"]  # no rewind flow was started


# -- /rename, /fork, /export ------------------------------------------------------------------
async def test_rename_and_fork(make_settings, server):
    server.add(text("first answer"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/rename")
        assert any("Usage: /rename <title>" in n for n in notices(app))
        await run_prompt(pilot, "the first prompt")
        await send(pilot, "/rename   Parser   work ")
        await wait_for(pilot, lambda: app.runtime.session.title == "Parser work", what="the rename")
        assert "Parser work" in app.status.render_text().plain

        original = app.runtime.session.id
        before = len(await app.runtime.store.all_messages(original))
        await send(pilot, "/fork")
        await wait_for(pilot, lambda: app.runtime.session.id != original, what="the fork")
        fork = app.runtime.session
        assert any(f"Forked into {fork.id[:8]} — the original session is unchanged" in n for n in notices(app))
        assert fork.parent_session_id == original and "Parser work" in fork.title
        assert user_texts(app) == ["the first prompt"]  # same history on screen
        assert [m.content for m in await app.runtime.history() if m.role == "user"] == ["the first prompt"]
        assert len(await app.runtime.store.all_messages(original)) == before

        server.add(text("on the fork"))
        await run_prompt(pilot, "continue here")
        assert len(await app.runtime.store.all_messages(original)) == before


async def test_export_command(make_settings, server, workspace):
    server.add(text("exported answer"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "export me")
        await send(pilot, "/export md out.md")
        await wait_for(pilot, lambda: any("Exported to" in n for n in notices(app)), what="the export notice")
        target = workspace / "out.md"
        assert f"Exported to {target}" in notices(app)[-1]
        assert "exported answer" in target.read_text()
        await send(pilot, "/export jsonl")
        await wait_for(pilot, lambda: sum("Exported to" in n for n in notices(app)) == 2, what="the second export")


async def test_a_long_resumed_session_mounts_older_messages_on_scroll_up(make_settings):
    """The newest few screens show at once; scrolling to the top brings older ones in."""
    from agent.session.models import Message
    from agent.session.store import Store
    from agent.ui.widgets.chat import FIRST_SHOWN, MAX_MOUNTED

    settings = make_settings()
    store = await Store.open()
    session = await store.create_session(cwd=str(settings.workspace))
    for i in range(150):
        await store.append(session, Message(role="user", content=f"question {i}"))
        await store.append(session, Message(role="assistant", content=f"answer {i}"))
    await store.close()

    app = CairnApp(settings, resume_id=session.id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(app.chat.children) >= FIRST_SHOWN, what="the history")
        assert len(app.chat.children) == FIRST_SHOWN
        assert app.chat.assistant_messages[-1].text == "answer 149"
        for _ in range(20):
            app.chat.scroll_home(animate=False)
            await pilot.pause(0.05)
            app.chat.scroll_end(animate=False)
            await pilot.pause(0.05)
            if len(app.chat.children) >= MAX_MOUNTED:
                break
        assert len(app.chat.children) == MAX_MOUNTED
        texts = [w.text for w in app.chat.assistant_messages]
        assert texts == [f"answer {i}" for i in range(50, 150)]  # in order, no gap


async def test_a_resumed_session_shows_what_it_cost_before_its_next_request(make_settings, workspace):
    """The status bar said $0.0000 after /resume until the next answer arrived."""
    from agent.session.models import Message
    from agent.session.store import Store

    store = await Store.open()
    try:
        session = await store.create_session(cwd=str(workspace), model="openai/fake", title="paid")
        await store.append(session, Message(role="user", content="q"))
        await store.append(session, Message(role="assistant", content="a", meta={"cost": 0.125}))
    finally:
        await store.close()
    app = CairnApp(make_settings(), resume_id=session.id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: "$0.1250" in app.status.render_text().plain, what="the resumed cost")
        await send(pilot, "/new")
        await wait_for(pilot, lambda: "price unknown" in app.status.render_text().plain, what="a new session's cost")
        picker = await open_picker(pilot)
        assert listed(picker)[0] == session.id
        await pilot.press("enter")
        await wait_for(pilot, lambda: "$0.1250" in app.status.render_text().plain, what="the cost after /resume")
