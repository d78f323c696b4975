"""Faults and interrupts as the user meets them in the TUI (Pilot, scripted server).

The retry countdown shows in the status bar and Esc cancels the wait; Esc stops a stream or
a running command (its whole process group); the UI takes the next prompt; Ctrl+C twice quits
mid-turn and the session resumes at once. No test asserts how fast anything happens.
"""

from __future__ import annotations

import re

import pytest
from textual.screen import ModalScreen

from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt
from agent.runtime.runtime import Runtime
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from tests.fakes.llm_server import cut, error, hang, rate_limited, text, tool_calls
from tests.loop.test_interrupts import GROUP_COMMAND, command_names, group_members, read_pgid
from tests.loop.test_provider_faults import assert_readable, assert_well_formed
from tests.ui.conftest import chat_text, run_prompt, send, wait_for, wait_ready

SIZE = (120, 36)


def status_text(app) -> str:
    return app.status.render_text().plain


def error_notices(app) -> list[str]:
    return [n.text for n in app.chat.query(Notice) if n.kind == "error"]


async def test_retry_countdown_shows_and_esc_cancels_the_wait(make_settings, server):
    server.add(rate_limited(retry_after=30), text("answer to the next prompt"))
    app = CairnApp(make_settings(llm={"retry_max_delay": 60}))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "hi")
        await wait_for(pilot, lambda: "Retrying in" in status_text(app), what="the retry countdown")
        line = status_text(app)
        seconds = int(re.search(r"Retrying in (\d+)s", line).group(1))
        assert 0 < seconds <= 30
        assert "Rate limited" in line and "(attempt 1/" in line and "esc to cancel" in line
        assert "(attempt 1/" in line[:80]  # the count is not what an 80-column line loses
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")
        await app.workers.wait_for_complete()
        assert "Retrying" not in status_text(app)
        assert "Interrupted" in chat_text(app)
        assert len(server.requests) == 1  # the retry never went out
        await run_prompt(pilot, "again")
        assert app.chat.assistant_messages[-1].text == "answer to the next prompt"


async def test_esc_while_a_command_runs_kills_its_group_and_the_ui_goes_on(make_settings, server, workspace):
    pgid_file = workspace / "pgid"
    server.add(
        tool_calls([("c1", "terminal-execute", {"command": GROUP_COMMAND.format(pgid=pgid_file)})]), text("next answer")
    )
    app = CairnApp(make_settings(yolo=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "run the sleepers")
        await wait_for(pilot, lambda: read_pgid(pgid_file), what="the command to start")
        pgid = read_pgid(pgid_file)
        await wait_for(pilot, lambda: command_names(group_members(pgid)).count("sleep") == 2, what="both sleeps")
        assert app.turn_running
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")
        await app.workers.wait_for_complete()
        await wait_for(pilot, lambda: not group_members(pgid), what="the process group to die")
        assert "Interrupted" in chat_text(app)
        block = app.chat.tool_blocks[-1]
        assert block.result is not None and block.result.status == "error"
        history = await app.runtime.history()
        assert [m.role for m in history] == ["user", "assistant", "tool"]
        await run_prompt(pilot, "what happened?")
        assert app.chat.assistant_messages[-1].text == "next answer"
    assert_well_formed(server.requests[-1]["messages"])


async def test_esc_twice_while_streaming_interrupts_and_keeps_the_partial(make_settings, server):
    server.add(hang(60, text="half an answer"), text("second answer"))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "take your time")
        await wait_for(
            pilot,
            lambda: app.chat.assistant_messages and app.chat.assistant_messages[0].text == "half an answer",
            what="the first chunk",
        )
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")
        await app.workers.wait_for_complete()
        assert not isinstance(app.screen, ModalScreen)  # interrupting is not the rewind gesture
        history = await app.runtime.history()
        assert [(m.role, m.status, m.content) for m in history][-1] == ("assistant", "interrupted", "half an answer")
        await run_prompt(pilot, "go on")
        assert app.chat.assistant_messages[-1].text == "second answer"
    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert request[-2:] == [{"role": "assistant", "content": "half an answer"}, {"role": "user", "content": "go on"}]


async def test_ctrl_c_twice_mid_turn_quits_and_the_session_resumes_at_once(make_settings, server):
    server.add(hang(60, text="partial work"))
    settings = make_settings()
    app = CairnApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        session_id = app.runtime.session.id
        await send(pilot, "long job")
        await wait_for(pilot, lambda: app.chat.assistant_messages, what="the stream")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app._exit, what="the app to exit")
    assert app.runtime is None  # the store was closed on the way out

    server.add(text("picked up where we left off"))
    events: list = []
    runtime = await Runtime.open(settings, FrontEnd(on_event=events.append), resume_id=session_id)
    try:
        history = await runtime.history()
        assert [(m.role, m.status, m.content) for m in history] == [
            ("user", "ok", "long job"),
            ("assistant", "interrupted", "partial work"),
        ]
        await runtime.submit(Prompt("continue"))
    finally:
        await runtime.close()
    assert [e.status for e in events if e.type == "turn_finished"] == ["ok"]
    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert request[-3:] == [
        {"role": "user", "content": "long job"},
        {"role": "assistant", "content": "partial work"},
        {"role": "user", "content": "continue"},
    ]


FAULTS = {
    "auth": ([error(401)], {}, "OPENAI_API_KEY"),
    "server errors": ([error(503)] * 3, {"llm": {"max_retries": 2, "retry_base_delay": 0.01}}, "503"),
    "stream cut": ([cut(after_chunks=4, text="The beginning of an answer")], {}, "kept"),
}


@pytest.mark.parametrize("steps,flags,says", FAULTS.values(), ids=FAULTS.keys())
async def test_a_fault_is_one_readable_line_and_the_next_prompt_works(make_settings, server, steps, flags, says):
    server.add(*steps, text("recovered"))
    app = CairnApp(make_settings(**flags))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hi")
        (shown,) = error_notices(app)
        assert says in shown
        assert_readable(shown)
        await run_prompt(pilot, "again")
        assert app.chat.assistant_messages[-1].text == "recovered"
        assert error_notices(app) == [shown]
    assert_well_formed(server.requests[-1]["messages"])
