"""The first screen (agent/ui/early.py) in a real terminal: keys typed before the app is up
reach it; Enter typed then sends the prompt; Ctrl+C there quits cleanly."""

from __future__ import annotations

import pytest

from tests.e2e.test_tmux import ANSWER_TIMEOUT, READY_TEXT, START_TIMEOUT, Tmux, cairn_line, pytestmark  # noqa: F401
from tests.fakes.llm_server import FakeLLMServer, text

APP_LIVE = "new session"  # the app's status line (the first screen says "starting…")


def _command(home, ws, base_url: str, *extra: str, then: str = "") -> str:
    return cairn_line(home, ws, base_url, *extra) + then


@pytest.fixture
def dirs(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def _user_text(request: dict) -> str:
    return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]


def test_prompt_sent_on_the_first_screen_is_answered(dirs):
    home, ws = dirs
    tmux = Tmux()
    with FakeLLMServer([text("Early bird answered.")]) as server:
        try:
            tmux.start(_command(home, ws, server.base_url))
            screen = tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            early = APP_LIVE not in screen  # normally: the app takes a few hundred ms more
            tmux.send("typed before the app", "Enter")
            screen = tmux.wait_for("Early bird answered.", timeout=ANSWER_TIMEOUT)
            assert "typed before the app" in screen and "Traceback" not in screen
            assert [_user_text(r) for r in server.requests] == ["typed before the app"]
        finally:
            tmux.kill()
    if not early:
        pytest.skip("the app was already up when the keys were sent (nothing early was tested)")


def test_text_typed_early_continues_in_the_app(dirs):
    home, ws = dirs
    tmux = Tmux()
    with FakeLLMServer([text("Both halves arrived.")]) as server:
        try:
            tmux.start(_command(home, ws, server.base_url))
            tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
            tmux.send("-l", "first half, ")
            tmux.wait_for(APP_LIVE, "first half,", timeout=START_TIMEOUT)
            tmux.send("-l", "second half")
            tmux.send("Enter")
            tmux.wait_for("Both halves arrived.", timeout=ANSWER_TIMEOUT)
            assert [_user_text(r) for r in server.requests] == ["first half, second half"]
        finally:
            tmux.kill()


def test_ctrl_c_on_the_first_screen_quits_and_restores_the_terminal(dirs):
    home, ws = dirs
    tmux = Tmux()
    try:
        tmux.start(
            _command(
                home,
                ws,
                "http://127.0.0.1:9/v1",
                then="; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -- '-\\?echo'; echo STTY-DONE; sleep 30",
            )
        )
        tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
        tmux.send("C-c")
        # Wait for the whole report: stty runs after the exit code is printed, however slowly.
        screen = tmux.wait_for("EXIT=", "STTY-DONE", timeout=START_TIMEOUT)
        assert "Traceback" not in screen
        if "EXIT=130" not in screen:
            # The app was up already: its own Ctrl+C (press twice) is tested elsewhere.
            assert "EXIT=0" in screen
            pytest.skip("the app was already up when Ctrl+C arrived")
        assert "EXIT=130\necho\n" in screen  # the terminal echoes again (stty says echo, not -echo)
    finally:
        tmux.kill()


async def test_resume_shows_the_conversation_with_the_first_prompt(dirs):
    """The first screen of `--resume` already holds the session's last messages; the app
    then shows the same conversation."""
    from agent.session.models import Message
    from agent.session.store import Store

    home, ws = dirs
    store = await Store.open(home / "sessions.db")
    session = await store.create_session(cwd=str(ws), model="openai/fake")
    for i in range(30):
        await store.append(session, Message(role="user", content=f"question number {i}"))
        await store.append(session, Message(role="assistant", content=f"answer number {i}"))
    await store.append(session, Message(role="assistant", content="LAST-ANSWER-MARKER"))
    await store.close()
    tmux = Tmux()
    try:
        tmux.start(_command(home, ws, "http://127.0.0.1:9/v1", "--resume", session.id[:8]))
        screen = tmux.wait_for(READY_TEXT, timeout=START_TIMEOUT)
        assert "LAST-ANSWER-MARKER" in screen and "question number 29" in screen
        assert "question number 0\n" not in screen  # only what fits
        tmux.wait_for("LAST-ANSWER-MARKER", "answer number 29", "openai/fake", timeout=START_TIMEOUT)
    finally:
        tmux.kill()


def test_enter_typed_before_cairn_took_the_terminal_sends_the_prompt(dirs, tmp_path):
    """Walk 9: `early at 0.1` Enter typed in the moment between the shell's Enter and cairn's
    first screen (the tty still cooked: Enter arrives as a line feed) is sent, not turned into
    a second line. The shell waits for a flag before starting cairn, so the keys are surely
    typed first."""
    home, ws = dirs
    flag = tmp_path / "go"
    tmux = Tmux()
    with FakeLLMServer([text("Type-ahead answered.")]) as server:
        try:
            wait = f"while [ ! -e {flag} ]; do sleep 0.05; done; "
            tmux.start(wait + _command(home, ws, server.base_url))
            tmux.send("-l", "early at 0.1")
            tmux.send("Enter")
            tmux.wait_for("early at 0.1", timeout=START_TIMEOUT)  # the cooked tty's echo: queued
            flag.touch()
            screen = tmux.wait_for("Type-ahead answered.", timeout=ANSWER_TIMEOUT)
            assert "Traceback" not in screen
            assert [_user_text(r) for r in server.requests] == ["early at 0.1"]
        finally:
            tmux.kill()
