"""`cairn --continue` from its first frame (issue 32, item 11): the status line never says
"no model · new session" while the settings and the session load; it names the model the
flags give and says a session is being resumed."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.status import StatusBar
from tests.ui.conftest import run_prompt, wait_for, wait_ready


def first_frame_status(model: str | None, resuming: bool) -> str:
    bar = StatusBar(model=model, resuming=resuming)
    return bar.render_text().plain


def test_before_the_settings_load_nothing_false_is_said():
    assert "openai/fake" in first_frame_status("openai/fake", True)
    assert "resuming…" in first_frame_status("openai/fake", True)
    for model in ("openai/fake", None):
        shown = first_frame_status(model, True)
        assert "no model" not in shown and "new session" not in shown


async def test_continue_says_so_from_the_first_frame(make_settings, server, workspace):
    from tests.fakes.llm_server import text

    server.add(text("stored answer"))
    first = CairnApp(make_settings())
    async with first.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "remember me")
        await first.quit_app()

    flags = {"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test"}
    again = CairnApp(workspace=workspace, flags=flags, continue_last=True)
    async with again.run_test(size=(80, 24)) as pilot:
        shown = again.status.render_text().plain  # before anything is loaded
        assert "openai/fake" in shown and "resuming…" in shown
        assert "no model" not in shown and "new session" not in shown
        await wait_ready(pilot)
        await wait_for(pilot, lambda: "remember me" in again.status.render_text().plain, what="the session's title")
        assert "resuming…" not in again.status.render_text().plain
