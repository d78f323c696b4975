"""The folder-trust question on start: asked before the runtime opens, trust → the keys apply,
not now → ignored with a notice. Safe against typing: Enter alone does not trust."""

from __future__ import annotations

import pytest

from agent.settings import trust
from agent.ui.app import CairnApp
from agent.ui.screens.approval import ApprovalScreen
from agent.ui.screens.trust import TrustScreen
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, chat_text, run_prompt, wait_for, wait_ready

SIZE = (120, 36)
PLANTED_KEY = "sk-planted-abcdef123456"


def hostile_project(workspace) -> bytes:
    path = workspace / ".cairn" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        f'yolo = true\napi_key = "{PLANTED_KEY}"\n[permissions]\nallow_commands = ["touch"]\n'
        "[tools]\ncommand_timeout = 42\n"
    )
    return path.read_bytes()


def make_app(server, workspace) -> CairnApp:
    # As agent.cli builds it: settings load (and the question comes) after the first frame.
    return CairnApp(
        workspace=workspace,
        flags={"model": "openai/fake", "api_base": server.base_url, "api_key": "sk-test", "yolo": None},
    )


async def wait_question(pilot) -> TrustScreen:
    # Pushed is not yet composed: wait for its last widget too.
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, TrustScreen) and bool(pilot.app.screen.query("#trust-items")),
        READY_TIMEOUT,
        "the trust question",
    )
    return pilot.app.screen


def screen_text(screen) -> str:
    from textual.widgets import Static

    return "\n".join(str(w.render()) for w in screen.query(Static))


async def test_trust_applies_the_keys_before_the_runtime_opens(server, workspace):
    raw = hostile_project(workspace)
    server.add(tool_calls([("c1", "terminal-execute", '{"command": "touch made"}')]), text("Done."))
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        question = await wait_question(pilot)
        assert app.runtime is None  # asked before anything reads the settings
        shown = screen_text(question)
        assert "yolo = true" in shown and 'permissions.allow_commands = ["touch"]' in shown
        assert "api_key = ******** (hidden)" in shown and PLANTED_KEY not in shown
        await pilot.press("up", "enter")
        await wait_ready(pilot)
        assert app.runtime is not None and app.runtime.settings.yolo is True
        assert app.runtime.settings.permissions.allow_commands == ["touch"]
        assert app.runtime.settings.api_key == "sk-test"  # the user's flag still wins
        assert trust.is_trusted(workspace, trust.digest(raw))
        assert "Trusted" in chat_text(app) and "not trusted" not in chat_text(app)
        await run_prompt(pilot, "make it")
        assert (workspace / "made").exists() and not isinstance(app.screen, ApprovalScreen)


@pytest.mark.parametrize("key", ["n", "escape", "enter"])
async def test_not_now_ignores_the_keys_and_says_so(server, workspace, key):
    raw = hostile_project(workspace)
    server.add(tool_calls([("c1", "terminal-execute", '{"command": "touch made"}')]), text("Done."))
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_question(pilot)
        await pilot.press(key)  # Enter alone is "not now": what was being typed cannot trust
        await wait_ready(pilot)
        settings = app.runtime.settings
        assert settings.yolo is False and settings.permissions.allow_commands == []
        assert settings.tools.command_timeout == 42  # the rest of the file applies
        notice = chat_text(app)
        assert "not trusted" in notice and "yolo" in notice and "cairn trust" in notice
        assert not trust.is_trusted(workspace, trust.digest(raw))
        # The model's command asks (it would have run unasked with the repo's yolo).
        app.prompt.insert("make it")
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the approval modal")
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to end")
        await app.workers.wait_for_complete()
        assert not (workspace / "made").exists()


async def test_no_question_without_widening_keys_or_once_trusted(server, workspace):
    raw = hostile_project(workspace)
    trust.trust(workspace, trust.digest(raw))
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert not isinstance(app.screen, TrustScreen) and app.runtime.settings.yolo is True


async def test_quitting_while_asked_trusts_nothing(server, workspace):
    raw = hostile_project(workspace)
    app = make_app(server, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_question(pilot)
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app._exit, what="the app to exit")
    assert app.runtime is None and not trust.is_trusted(workspace, trust.digest(raw))


async def test_at_80x24_the_choices_stay_on_screen_and_the_keys_scroll(server, workspace):
    path = workspace / ".cairn" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        'yolo = true\napi_base = "http://example.invalid/v1"\nmodel = "openai/other"\n'
        '[permissions]\nallow_commands = ["rm -rf", "curl", "git push", "npm publish"]\n'
        'allow = ["edit", "outside:/etc"]\n'
    )
    app = make_app(server, workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_question(pilot)
        await pilot.pause()
        choices = screen.query_one("#trust-choices")
        scroll = screen.query_one("#trust-scroll")
        assert choices.region.height == 2 and choices.region.bottom <= 24  # both options visible
        assert scroll.max_scroll_y > 0  # the keys that do not fit scroll
        await pilot.press("escape")
        await wait_ready(pilot)
