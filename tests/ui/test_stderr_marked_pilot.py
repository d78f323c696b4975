"""What a command wrote to stderr is marked in the chat (issue 32, item 14): the terminal
tool's expanded output and a `!command`'s block. Both capture stdout and stderr on separate
pipes; what the model receives is unchanged (the same JSON fields, the same note)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Collapsible, Static

from agent.runtime.shell import ShellRun, note_message, shown_output, shown_streams
from agent.ui.widgets.shell_block import ShellBlock
from agent.ui.widgets.tool_block import STDERR_STYLE
from tests.ui.test_snapshots import call, command_result, fixed_home, make_app, settle  # noqa: F401 - autouse


def styled(text: Text) -> dict[str, str]:
    """Each styled stretch of `text`, by its text."""
    return {text.plain[span.start : span.end]: str(span.style) for span in text.spans if str(span.style)}


def test_a_notes_streams_come_back_apart_and_its_output_reads_as_before():
    run = ShellRun("make", "built a\nbuilt b", "warning: x", 0, False, False, 5)
    note = note_message(run)
    assert shown_streams(note) == ("built a\nbuilt b", "warning: x")
    assert shown_output(note) == "built a\nbuilt b\nwarning: x"
    assert "<bash-stderr>warning: x</bash-stderr>" in (note.content or "")  # what the model reads


async def test_the_terminal_tools_stderr_is_marked_in_its_output(tmp_path):
    from agent.session.models import Message

    app = make_app(tmp_path)
    run = call("c1", "terminal-execute", {"command": "make"})
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(
            [
                Message(id="a1", role="assistant", content="", tool_calls=[run]),
                command_result("c1", run.arguments, "built a\nbuilt b\n", "warning: old flag\n", 2),
            ]
        )
        await settle(pilot)
        block = app.chat.tool_blocks[0]
        block.query_one(Collapsible).collapsed = False
        await settle(pilot)
        output = block.query_one(".tool-output", Static).content
        assert isinstance(output, Text) and output.plain == "built a\nbuilt b\nwarning: old flag"
        assert styled(output) == {"warning: old flag": STDERR_STYLE}  # stdout stays as it was


async def test_a_shell_blocks_stderr_is_marked(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        note = note_message(ShellRun("make", "built a\nbuilt b", "warning: old flag", 2, False, False, 5))
        block = app.chat.add_block(ShellBlock.from_note(note))
        await settle(pilot)
        output = block.query_one(".shell-output", Static).content
        assert isinstance(output, Text)
        assert output.plain.startswith("built a\nbuilt b\nwarning: old flag")
        marked = styled(output)
        assert marked.get("warning: old flag") == STDERR_STYLE
        assert "built a" not in " ".join(k for k, v in marked.items() if v == STDERR_STYLE)
