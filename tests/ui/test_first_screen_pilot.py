"""Issue 18 gaps: the first screen's header (folder, model, mode, key hints), yolo kept in
the status bar, and "loading model library…" while the backend loads behind the first screen."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.header import ASK_MODE, YOLO_MODE
from agent.ui.widgets.status import LOADING
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, wait_for, wait_ready

SIZE = (80, 24)


def header_text(app) -> str:
    return str(app.query_one("#header").content)


async def test_header_shows_folder_model_mode_and_keys_until_the_first_prompt(
    make_settings, server, workspace, monkeypatch
):
    monkeypatch.setenv("HOME", str(workspace.parent))
    server.add(text("Hello."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        header = app.query_one("#header")
        assert header.display
        shown = header_text(app)
        assert f"~/{workspace.name}" in shown and "openai/fake" in shown and ASK_MODE in shown
        assert "Esc Esc" in shown and "/help" in shown
        assert "YOLO" not in str(app.status.render_text())
        await run_prompt(pilot, "hi")
        await wait_for(pilot, lambda: not header.display, what="the header to step aside")


async def test_yolo_is_loud_in_the_header_and_stays_in_the_status_bar(make_settings, server):
    server.add(text("Done."))
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert YOLO_MODE in header_text(app)
        await run_prompt(pilot, "go")
        await wait_for(pilot, lambda: not app.query_one("#header").display, what="the header to step aside")
        assert "YOLO" in str(app.status.render_text())


async def test_status_says_the_model_library_is_loading_until_it_is(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        status = app.status
        await wait_ready(pilot)
        await wait_for(
            pilot,
            lambda: app.runtime.backend_ready and not status.loading,
            90,
            "the backend to load and the status to stop saying it loads",
        )
        assert LOADING not in status.activity()
        # What the line says while it loads: idle, and during a turn instead of a bare "Working".
        status.set_loading(True)
        assert status.activity() == LOADING
        status.turn_started()
        assert LOADING in status.activity() and "Working" not in status.activity()
        status.turn_ended()
        status.set_loading(False)
        assert status.activity() == ""
