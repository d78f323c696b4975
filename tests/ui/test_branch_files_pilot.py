"""Issue 18 bug 9: switching back to a branch whose file changes a rewind undid offers to
re-apply them (as rewind offers to undo them), so the conversation and the disk agree.

Real runtime, database and scripted LLM server; the restore goes through the journaled path."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.screens.rewind import RestoreScreen
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, wait_for, wait_ready
from tests.ui.test_sessions_pilot import SIZE, edit, esc_esc, notices, user_texts


async def rewind_first_turn_with_files(pilot, workspace) -> None:
    """Two edits (x 1→2→3), then rewind to before the first with its files restored (x = 1)."""
    app = pilot.app
    await run_prompt(pilot, "make x two")
    await run_prompt(pilot, "make x three")
    assert (workspace / "a.py").read_text() == "x = 3\n"
    await esc_esc(pilot)
    await pilot.press("down", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the restore step")
    await pilot.press("f")
    await wait_for(pilot, lambda: app.prompt.text == "make x two", what="the rewind")
    await app.workers.wait_for_complete()
    assert (workspace / "a.py").read_text() == "x = 1\n"
    app.prompt.text = ""


async def choose_branch(pilot) -> None:
    app = pilot.app
    await esc_esc(pilot)
    options = app.screen.query_one("#rewind-list").options
    app.screen.query_one("#rewind-list").highlighted = next(
        i for i, o in enumerate(options) if (o.id or "").startswith("branch:")
    )
    await pilot.press("enter")


async def test_switching_back_offers_to_reapply_the_branch_file_changes(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    (workspace / "b.py").write_text("keep\n")
    server.add(edit("c1", "x = 1", "x = 2"), text("Now 2."), edit("c2", "x = 2", "x = 3"), text("Now 3."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await rewind_first_turn_with_files(pilot, workspace)
        server.add(edit("c3", "x = 1", "x = 4"), text("Now 4."))
        await run_prompt(pilot, "make x four")  # a new branch, with its own change to a.py

        await choose_branch(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the re-apply offer")
        screen = app.screen
        assert "make x three" in str(screen.query_one("#restore-title").content)
        files = str(screen.query_one("#restore-files").content)
        assert "re-apply" in files and "a.py" in files and "b.py" not in files
        choices = [str(o.prompt) for o in screen.query_one("#restore-choices").options]
        assert choices[0].startswith("Switch and re-apply")
        await pilot.press("f")
        await wait_for(pilot, lambda: user_texts(app) == ["make x two", "make x three"], what="the old branch")
        await app.workers.wait_for_complete()
        assert (workspace / "a.py").read_text() == "x = 3\n"  # the disk agrees with the conversation
        assert any("Re-applied: a.py" in n for n in notices(app))

        # And back to the newer branch, which changed a.py its own way: its version returns.
        await choose_branch(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the offer back")
        await pilot.press("f")
        await wait_for(pilot, lambda: user_texts(app) == ["make x four"], what="the newer branch")
        await app.workers.wait_for_complete()
        assert (workspace / "a.py").read_text() == "x = 4\n"


async def test_a_file_changed_outside_is_a_conflict_left_alone(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(edit("c1", "x = 1", "x = 2"), text("Now 2."), edit("c2", "x = 2", "x = 3"), text("Now 3."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await rewind_first_turn_with_files(pilot, workspace)
        (workspace / "a.py").write_text("x = 42  # mine\n")

        await choose_branch(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the offer")
        assert "conflict" in str(app.screen.query_one("#restore-files").content)
        await pilot.press("f")
        await wait_for(pilot, lambda: user_texts(app) == ["make x two", "make x three"], what="the old branch")
        await app.workers.wait_for_complete()
        assert (workspace / "a.py").read_text() == "x = 42  # mine\n"
        assert any("Changed outside cairn, left as they are: a.py" in n for n in notices(app))


async def test_switching_to_a_branch_whose_files_are_in_place_asks_nothing(make_settings, server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    server.add(edit("c1", "x = 1", "x = 2"), text("Now 2."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "make x two")
        await esc_esc(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RestoreScreen), what="the restore step")
        await pilot.press("c")  # conversation only: a.py stays x = 2, as the branch left it
        await wait_for(pilot, lambda: app.prompt.text == "make x two", what="the rewind")
        await app.workers.wait_for_complete()
        app.prompt.text = ""

        await choose_branch(pilot)
        await wait_for(pilot, lambda: user_texts(app) == ["make x two"], what="the old branch")
        await app.workers.wait_for_complete()
        assert not isinstance(app.screen, RestoreScreen)
        assert (workspace / "a.py").read_text() == "x = 2\n"
