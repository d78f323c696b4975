"""Terminal escapes in tool calls and results never reach the screen as control codes.

A command's output (or a file, or the model's arguments) may hold ESC sequences that clear
the screen, move the cursor, set the window title or write the clipboard. The tool block
shows them as inert text (`␛[2J`): checked on the pure renderers and on what Textual
actually renders for a mounted ToolBlock.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App
from textual.widgets import Collapsible

from agent.session.models import Message, ToolCall
from agent.tools.permissions import ApprovalRequest
from agent.ui.screens.approval import ApprovalScreen
from agent.ui.widgets import tool_render
from agent.ui.widgets.chat import ToolBlock
from tests.hostile.conftest import bounded

HOSTILE = (
    "red \x1b[31mRED\x1b[0m \x1b[2J\x1b[H home \x1b[10;5H moved \x1b]0;title\x07 \x1b]52;c;ZXZpbA==\x07 "
    "\x9b31m c1 \x08bs \x00nul \x7fdel \r\x1b[Kwiped \x1bc reset \x0e shift-out"
)
# What must never be handed to the terminal: every C0 control but newline/tab, DEL, C1.
FORBIDDEN = {chr(c) for c in range(0x20) if chr(c) not in "\n\t"} | {chr(c) for c in range(0x7F, 0xA0)}


def clean(text: str) -> bool:
    return not (set(text) & FORBIDDEN)


def call(name: str, args) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=args if isinstance(args, str) else json.dumps(args))


def result(content: str, name: str = "terminal-execute", status: str = "ok", **meta) -> Message:
    return Message(role="tool", tool_call_id="c1", tool_name=name, content=content, status=status, meta=meta)


def terminal(stdout: str, stderr: str = "") -> str:
    return json.dumps({"command": "x", "stdout": stdout, "stderr": stderr, "exitCode": 0})


def test_inert_keeps_text_and_shows_controls():
    assert tool_render.inert("plain\ttext\nnext é 中") == "plain\ttext\nnext é 中"
    assert tool_render.inert("\x1b[2J") == "␛[2J"
    assert tool_render.inert("\x00\x07\x08\x7f") == "␀␇␈␡"
    assert tool_render.inert("\x9b") == "\\x9b"
    assert tool_render.inert("\udcff") == "\\udcff"


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(result(terminal(HOSTILE, HOSTILE)), id="terminal-output"),
        pytest.param(result("Error: " + HOSTILE, status="error"), id="error"),
        pytest.param(result("📄 a.txt (lines 1-1/1)\n1→" + HOSTILE, name="filesystem-read"), id="file-read"),
        pytest.param(
            result("--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+" + HOSTILE + "\n", name="filesystem-edit"),
            id="edit-diff-content",
        ),
        pytest.param(result("ok", name="filesystem-create", diff="+" + HOSTILE), id="create-diff-meta"),
        pytest.param(result(HOSTILE, name="context-read"), id="other-tool"),
    ],
)
def test_renderers_output_no_control_characters(message):
    for text in (
        tool_render.summarize_result(message),
        tool_render.result_body(message),
        tool_render.result_diff(message) or "",
    ):
        assert clean(text), repr(text)
    assert "␛[2J" in tool_render.result_body(message) + (tool_render.result_diff(message) or "")


@pytest.mark.parametrize(
    "name, args",
    [
        ("terminal-execute", {"command": "printf '\x1b[2J'"}),
        ("filesystem-read", {"filePath": ["a\x1b[Hb", {"path": "\x9bc", "startLine": 1}]}),
        ("filesystem-edit", {"filePath": "evil\x1b]0;t\x07.py"}),
        ("context-grep", {"id": "\x1b[31m", "pattern": "\x00"}),
        ("other", {"k\x1b": "\x1b[2J"}),
        ("other", "{not json \x1b[2J"),
        ("other", '"just a \\u001b[2J string"'),
    ],
)
def test_call_arguments_are_inert(name, args):
    assert clean(tool_render.format_args(call(name, args)))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300))
def test_any_text_renders_inert(text):
    messages = [
        result(terminal(text, text)),
        result(text),
        result("Error: " + text, status="error"),
        result(text, name="filesystem-edit", diff=text),
    ]
    for message in messages:
        for shown in (
            tool_render.summarize_result(message),
            tool_render.result_body(message),
            tool_render.result_diff(message) or "",
        ):
            assert clean(shown)
    assert clean(tool_render.format_args(call("terminal-execute", {"command": text})))


# -- what Textual renders --------------------------------------------------------------------


class BlockApp(App):
    def __init__(self, block: ToolBlock) -> None:
        super().__init__()
        self.block = block

    def compose(self):
        yield self.block


def rendered_text(app: App) -> str:
    """Every line every widget renders (the segments Textual writes to the terminal)."""
    lines = []
    for widget in app.screen.walk_children():
        for y in range(widget.size.height):
            lines.append("".join(segment.text for segment in widget.render_line(y)))
    return "\n".join(lines)


async def _render(block: ToolBlock, message: Message) -> str:
    app = BlockApp(block)
    async with app.run_test(size=(120, 60)) as pilot:
        block.set_result(message)
        await pilot.pause()
        for collapsible in block.query(Collapsible):
            collapsible.collapsed = False
        await pilot.pause()
        await pilot.pause()
        return rendered_text(app)


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(result(terminal(HOSTILE, "warn \x1b[33m!")), id="terminal"),
        pytest.param(result("Error: \x1b[2Jboom " + HOSTILE, status="error"), id="error"),
        pytest.param(
            result(
                "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+\x1b[2J" + HOSTILE + "\n",
                name="filesystem-edit",
                diff="--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+\x1b[2J" + HOSTILE + "\n",
            ),
            id="diff",
        ),
    ],
)
async def test_tool_block_renders_escapes_as_text(message):
    block = ToolBlock(call("terminal-execute", {"command": "printf '\x1b[2J\x1b[H' # \x1b]0;t\x07"}))
    text = await bounded(_render(block, message), 60)
    assert "\x1b" not in text and "\x9b" not in text and "\x00" not in text
    assert clean(text)
    assert "␛[2J" in text  # shown, not executed


async def test_tool_block_header_with_a_hostile_tool_name():
    block = ToolBlock(call("evil\x1b[2J\x1b]0;pwned\x07", {}))
    text = await bounded(_render(block, result("Error: unknown tool", status="error")), 60)
    assert clean(text)
    assert "evil␛[2J" in text


# -- the approval dialog ---------------------------------------------------------------------


class ApprovalApp(App):
    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def on_mount(self) -> None:
        self.push_screen(ApprovalScreen(self.request))


async def _render_approval(request: ApprovalRequest) -> str:
    app = ApprovalApp(request)
    async with app.run_test(size=(120, 60)) as pilot:
        await pilot.pause()
        await pilot.pause()
        return rendered_text(app)


@pytest.mark.parametrize(
    "kind, detail",
    [
        pytest.param("command", "printf '\x1b[2J' " + HOSTILE, id="command"),
        pytest.param("edit", "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+\x1b[2J" + HOSTILE + "\n", id="diff"),
        pytest.param("outside", "/tmp/\x1b[2J" + HOSTILE, id="path"),
    ],
)
async def test_approval_dialog_shows_escapes_as_text(kind, detail):
    request = ApprovalRequest(
        tool="evil\x1b]0;t\x07",
        kind=kind,
        title="Run \x1b[2J" + HOSTILE,
        detail=detail,
        key="k",
        scopes=["command:x\x1b[2J"],
        reason="it \x1b[31mred",
    )
    text = await bounded(_render_approval(request), 60)
    assert clean(text), repr(text)
    assert "␛[2J" in text  # shown, not executed
