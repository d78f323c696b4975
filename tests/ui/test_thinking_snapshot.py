"""The model's thinking on screen (issue 28), as SVG snapshots at 80×24 and 120×40: stored
answers that thought show one dimmed line above their text ("✻ Thought (N words)"), one
that thought and then called a tool keeps its line above the tool block, and an answer
still thinking shows its thinking dimmed as it streams. Same rules as test_snapshots.py:
fixed messages and events, no runtime, no clock; accept a deliberate change with
`pytest tests/ui/test_thinking_snapshot.py --snapshot-update` (pictures in
tests/ui/__snapshots__/test_thinking_snapshot/)."""

from __future__ import annotations

import pytest

from agent.session.models import Message
from tests.ui.conftest import wait_for
from tests.ui.test_snapshots import SIZES, call, command_result, make_app, settle

THOUGHT = (
    "The user asks why parse() returns a Vec<T>. The signature says list[str] in Python; "
    "they are reading the Rust port. I should point at the port's return type."
)
PLAN = "Run pytest first, then mypy: the type check is what they care about."


@pytest.fixture(autouse=True)
def fixed_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))


def conversation() -> list[Message]:
    run = call("c1", "terminal-execute", {"command": "pytest -q"})
    return [
        Message(id="u1", role="user", content="Why does parse() return a Vec<T>?"),
        Message(id="a1", role="assistant", content="The Rust port returns `Vec<String>`.", meta={"thinking": THOUGHT}),
        Message(id="u2", role="user", content="Run the tests."),
        Message(id="a2", role="assistant", content="", tool_calls=[run], meta={"thinking": PLAN}),
        command_result("c1", run.arguments, "....\n4 passed in 0.02s\n", "", 0),
        Message(id="a3", role="assistant", content="All 4 tests pass."),
    ]


@pytest.mark.parametrize("size", SIZES)
def test_thinking_collapsed_and_streaming(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.turn import events as ev

        app = pilot.app
        app.chat.show_history(conversation())
        await settle(pilot)
        app.chat.add_user("And the type check?")
        app.handle_event(ev.AssistantStarted(message_id="a4"))
        app.handle_event(ev.ThinkingDelta(message_id="a4", text="mypy runs on src/; "))
        app.handle_event(ev.ThinkingDelta(message_id="a4", text="the config is in pyproject.toml."))
        block = app.chat.assistant_messages[-1].thinking
        await wait_for(pilot, lambda: "pyproject" in str(block.render()), what="the thinking drawn")
        app.prompt.cursor_blink = False
        await pilot.pause()

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
