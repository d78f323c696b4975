"""What the screen shows, as SVG snapshots (pytest-textual-snapshot) at 80×24 and 120×40.

The app is driven with fixed events and fixed messages (ids, numbers, texts), and no runtime
is opened: no clock, no session id, no folder reaches the screen, so the pictures only change
when what cairn draws changes. After a deliberate change, look at the new pictures and accept
them with `pytest tests/ui/test_snapshots.py --snapshot-update` (they live in
tests/ui/__snapshots__/test_snapshots/, committed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agent.ui.app
from agent.session.models import ContextEvent, Message, ToolCall
from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from tests.ui.conftest import wait_for

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
WINDOW = 128_000

ANSWER = """The parser returns a `Vec<T>`; in Java it would be a List<String>.

```python
def parse(text: str) -> list[str]:
    return [part for part in text.split(",") if part]
```

A traceback ends `in <module>`: that is the script's top level."""

DIFF = "".join(
    ["--- a/src/parse.py\n", "+++ b/src/parse.py\n", "@@ -1,40 +1,40 @@\n"]
    + [f"-old line {i}\n+new line {i}\n" for i in range(40)]
)


@pytest.fixture(autouse=True)
def fixed_home(tmp_path, monkeypatch):
    """The header shows the folder from "~": with HOME at tmp_path it is always "~/ws"."""
    monkeypatch.setenv("HOME", str(tmp_path))


class SnapshotApp(CairnApp):
    """CairnApp without a runtime: what it draws comes from the test alone."""

    CSS_PATH = str(Path(agent.ui.app.__file__).parent / CairnApp.CSS_PATH)  # (relative to the class's module)

    def open_runtime(self) -> None:  # type: ignore[override]
        self.opening = False
        self.status.set_state("")
        self.status.set_info(window=WINDOW)


def make_app(tmp_path) -> SnapshotApp:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return SnapshotApp(load_settings(workspace, flags={"model": "openai/fake-model", "api_key": "sk-test"}))


async def settle(pilot, *, streaming: bool = False) -> None:
    """Everything drawn: the stored answers' Markdown, the workers (an open stream's never
    ends: with `streaming`, wait for its text instead)."""
    app = pilot.app
    app.prompt.cursor_blink = False
    await app.chat.history_drawn(timeout=10)
    await pilot.pause()
    if streaming:
        await wait_for(pilot, lambda: app.chat.assistant_messages[-1].query("MarkdownBlock"), what="the stream")
        await pilot.pause(0.2)  # the stream's writer paints at most 20 times a second
    else:
        await app.workers.wait_for_complete()
    # Tool titles are fitted to their width once laid out (the Ctrl+O hint with them): a
    # loaded machine can take the picture before that.
    from agent.ui.widgets.tool_block import ToolBlock

    await wait_for(pilot, lambda: all(b.fitted for b in app.query(ToolBlock) if b.display), what="tool titles fitted")
    await pilot.pause()


def call(call_id: str, name: str, args: dict) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=json.dumps(args))


def command_result(call_id: str, command: str, stdout: str, stderr: str, code: int) -> Message:
    content = json.dumps({"command": command, "stdout": stdout, "stderr": stderr, "exitCode": code})
    return Message(
        id=f"r-{call_id}",
        role="tool",
        tool_call_id=call_id,
        tool_name="terminal-execute",
        content=content,
        status="ok" if code == 0 else "error",
        meta={"exitCode": code},
    )


def conversation() -> list[Message]:
    ok = call("c1", "terminal-execute", {"command": "pytest -q tests/test_parse.py"})
    failed = call("c2", "terminal-execute", {"command": "python -m mypy src"})
    read = call("c3", "filesystem-read", {"filePath": "src/parse.py"})
    return [
        Message(id="u1", role="user", content="Why does parse() return a Vec<T>?"),
        Message(id="a1", role="assistant", content=ANSWER),
        Message(id="u2", role="user", content="Run the tests and the type check."),
        Message(id="a2", role="assistant", content="", tool_calls=[ok, failed, read]),
        command_result("c1", ok.arguments, "....\n4 passed in 0.02s\n", "", 0),
        command_result("c2", failed.arguments, "", "src/parse.py:3: error: Missing return type\n", 2),
        Message(
            id="r-c3",
            role="tool",
            tool_call_id="c3",
            tool_name="filesystem-read",
            content="📄 src/parse.py\n1→def parse(text):\n2→    return text.split(',')",
        ),
        Message(id="a3", role="assistant", content="The tests pass; mypy wants a return type."),
    ]


@pytest.mark.parametrize("size", SIZES)
def test_first_screen(snap_compare, tmp_path, size):
    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES)
def test_answer_with_code_generics_and_tool_blocks(snap_compare, tmp_path, size):
    """Tool blocks: ok (collapsed), failed (exit 2), a read expanded with Ctrl+O."""

    async def run_before(pilot) -> None:
        pilot.app.chat.show_history(conversation())
        await settle(pilot)
        pilot.app.chat.tool_blocks[-1].query_one("Collapsible").collapsed = False
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_streaming_answer(snap_compare, tmp_path, size):
    """An answer still streaming (half of it in), the status line without a clock."""

    async def run_before(pilot) -> None:
        from agent.turn import events as ev

        app = pilot.app
        app.chat.add_user("Why does parse() return a Vec<T>?")
        app.handle_event(ev.AssistantStarted(message_id="a1"))
        app.handle_event(ev.TextDelta(message_id="a1", text=ANSWER[: len(ANSWER) // 2]))
        await settle(pilot, streaming=True)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_approval_with_a_long_diff(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.tools.permissions import ApprovalRequest
        from agent.ui.screens.approval import ApprovalScreen

        request = ApprovalRequest(
            tool="filesystem-edit",
            kind="edit",
            title="Edit src/parse.py",
            detail=DIFF,
            key="edit:src/parse.py",
            scopes=["edit:src/parse.py"],
        )
        pilot.app.chat.show_history(conversation()[:2])  # docked under the chat, which stays in view
        await settle(pilot)
        pilot.app.push_screen(ApprovalScreen(request))
        await settle(pilot)
        hint = pilot.app.screen.query_one("#approval-hint")
        await wait_for(pilot, lambda: "more lines" in hint.render().plain, what="the scroll hint")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_condensed_marker_and_queued_message(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.turn import events as ev

        app = pilot.app
        app.chat.show_history(conversation()[:2])
        await settle(pilot)
        summary = Message(
            id="sum-1",
            role="user",
            kind="summary",
            content="## Summary\nparse() was explained.",
            meta={
                "condensed": {
                    "first_id": "u1",
                    "last_id": "a1",
                    "count": 2,
                    "tokens_before": 120_431,
                    "tokens_after": 8_210,
                    "automatic": True,
                }
            },
        )
        event = ContextEvent(
            session_id="s",
            action="condense",
            trigger="auto",
            outcome="ok",
            tokens_before=120_431,
            tokens_after=8_210,
            duration_ms=3_200,
            summary_id="sum-1",
        )
        app.handle_event(ev.ContextManaged(event=event, summary=summary))
        app.queued.add("and now make the lexer return a Vec<Token> too")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
