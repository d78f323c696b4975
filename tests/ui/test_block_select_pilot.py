"""Every folded block is reachable from the keyboard at 80×24 (issue 46, item 1; the walk's 2):
Ctrl+O opens the block nearest the bottom of the view, so PageUp to an older block then Ctrl+O
opens THAT block (it opened the newest, whatever was shown); Ctrl+↑/Ctrl+↓ move a visible
selection between blocks, Enter (prompt empty) or Ctrl+O opens the selected one; a `!command`'s
long output opens from the keyboard too. Each block's hint is true for that block."""

from __future__ import annotations

from textual.widgets import Collapsible

from agent.session.models import Message
from agent.ui.widgets.block_select import SELECTED
from agent.ui.widgets.shell_block import ShellBlock
from agent.ui.widgets.tool_block import ToolBlock
from tests.ui.conftest import wait_for
from tests.ui.test_snapshots import call, command_result, fixed_home, make_app, settle  # noqa: F401 - autouse

SIZE = (80, 24)
PARAGRAPH = "\n".join(f"Line {i} of the explanation between the tool calls." for i in range(14))


def four_blocks() -> list[Message]:
    """read + git log, then pytest, then an edit: four folded blocks, text between them."""
    read = call("c1", "filesystem-read", {"filePath": "src/signer.py"})
    log = call("c2", "terminal-execute", {"command": "git log --oneline -5"})
    tests = call("c3", "terminal-execute", {"command": "python -m pytest tests/test_signer.py"})
    edit = call("c4", "filesystem-edit", {"filePath": "src/signer.py"})
    diff = "--- a/src/signer.py\n+++ b/src/signer.py\n@@ -1,3 +1,3 @@\n-old\n+new\n"
    return [
        Message(id="u1", role="user", content="add a sha256 default"),
        Message(id="a1", role="assistant", content="", tool_calls=[read, log]),
        Message(
            id="r-c1",
            role="tool",
            tool_call_id="c1",
            tool_name="filesystem-read",
            content="📄 src/signer.py\n" + "\n".join(f"{i}→x = {i}" for i in range(30)),
        ),
        command_result("c2", log.arguments, "\n".join(f"abc{i} commit {i}" for i in range(5)), "", 0),
        Message(id="a2", role="assistant", content=PARAGRAPH, tool_calls=[tests]),
        command_result("c3", tests.arguments, "PYTEST-OUTPUT-LINE\n2 passed in 0.1s\n", "", 0),
        Message(id="a3", role="assistant", content=PARAGRAPH, tool_calls=[edit]),
        Message(
            id="r-c4",
            role="tool",
            tool_call_id="c4",
            tool_name="filesystem-edit",
            content="ok",
            meta={"diff": "".join(diff) + "".join(f"-a{i}\n+b{i}\n" for i in range(30))},
        ),
        Message(id="a4", role="assistant", content="Done: sha256 is the default now."),
    ]


def shown(shell: ShellBlock) -> str:
    found = shell.query(".shell-output")
    return str(found.first().render()) if found else ""


def box(block: ToolBlock) -> Collapsible:
    return block.query_one(Collapsible)


def title(block: ToolBlock) -> str:
    return box(block).query_one("CollapsibleTitle").render().plain  # type: ignore[union-attr]


async def test_page_up_then_ctrl_o_opens_the_block_in_view(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.show_history(four_blocks())
        await settle(pilot)
        read, log, tests, edit = app.chat.tool_blocks
        assert all(box(b).collapsed for b in (read, log, tests, edit))
        # At the bottom, the edit is the block Ctrl+O opens; the others say how to reach them.
        await wait_for(pilot, lambda: title(edit).endswith("Ctrl+O to expand"), what="the newest's hint")
        assert title(tests).endswith("Ctrl+↑ to select")
        while not app.chat.selection._in_view(tests) or app.chat.selection._in_view(edit):
            await pilot.press("pageup")
            await pilot.pause()
        await wait_for(pilot, lambda: title(tests).endswith("Ctrl+O to expand"), what="the hint following the view")
        assert title(edit).endswith("Ctrl+↓ to select")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: not box(tests).collapsed, what="the pytest block opened")
        assert box(edit).collapsed and box(log).collapsed
        await wait_for(
            pilot, lambda: "PYTEST-OUTPUT-LINE" in str(tests.query_one(".tool-output").render()), what="body"
        )


async def test_ctrl_up_selects_older_blocks_and_enter_opens_the_selected_one(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.show_history(four_blocks())
        await settle(pilot)
        read, log, tests, edit = app.chat.tool_blocks
        await pilot.press("ctrl+up")  # the block above the one Ctrl+O would open
        await wait_for(pilot, lambda: tests.has_class(SELECTED), what="the pytest block selected")
        assert app.chat.selection._in_view(tests)  # scrolled to it
        await wait_for(pilot, lambda: title(tests).endswith("Ctrl+O to expand"), what="its hint")
        await pilot.press("ctrl+up", "ctrl+up")
        await wait_for(pilot, lambda: read.has_class(SELECTED), what="the read selected")
        assert not tests.has_class(SELECTED) and not log.has_class(SELECTED)
        await pilot.press("ctrl+down")
        await wait_for(pilot, lambda: log.has_class(SELECTED), what="back down to git log")
        await pilot.press("enter")  # the prompt is empty: Enter opens the selected block
        await wait_for(pilot, lambda: not box(log).collapsed, what="git log opened")
        assert box(read).collapsed and box(tests).collapsed and box(edit).collapsed
        assert app.prompt.text == ""
        await pilot.press("ctrl+o")  # Ctrl+O acts on the selection too: closes it again
        await wait_for(pilot, lambda: box(log).collapsed, what="git log closed")
        await pilot.press("escape")  # lets the selection go
        await wait_for(pilot, lambda: not log.has_class(SELECTED), what="no selection")
        assert app.chat.selection.selected is None


async def test_a_long_shell_output_opens_from_the_keyboard(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.show_history(four_blocks()[:4])
        await settle(pilot)
        shell = ShellBlock("seq 40")
        app.chat.add_block(shell)
        shell.finish("\n".join(str(i) for i in range(1, 41)), "", {"exit_code": 0})
        await wait_for(pilot, lambda: "28 more lines above · Ctrl+O to expand" in shown(shell), what="hint")
        assert "click" not in shown(shell)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: shell.expanded and "more lines" not in shown(shell), what="all of it")


async def test_ctrl_up_past_the_oldest_block_says_so(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.chat.show_history(four_blocks())
        await settle(pilot)
        read = app.chat.tool_blocks[0]
        await pilot.press("ctrl+up", "ctrl+up", "ctrl+up")
        await wait_for(pilot, lambda: read.has_class(SELECTED), what="the oldest selected")
        await pilot.press("ctrl+up")
        await wait_for(pilot, lambda: "No older folded block" in app.status.render_text().plain, what="the flash")
        assert read.has_class(SELECTED)
