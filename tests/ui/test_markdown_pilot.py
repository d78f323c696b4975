"""Answers are Markdown without raw HTML: text in angle brackets stays on screen."""

from __future__ import annotations

from agent.ui.app import CairnApp
from tests.fakes.llm_server import text
from tests.ui.conftest import READY_TIMEOUT, run_prompt, wait_for, wait_ready

ANSWER = (
    "Return a List<String> from it; in Rust a Vec<T>.\n\n<div>\n\n"
    '```\nTraceback:\n  File "x.py", line 1, in <module>\n```\n\nThen `Option<u8>` and <b>bold?</b>'
)


def shown(app) -> str:
    from textual.widgets._markdown import MarkdownBlock, MarkdownFence

    return "\n".join(
        block.code if isinstance(block, MarkdownFence) else str(block.render())
        for block in app.chat.query(MarkdownBlock)
    )


async def test_angle_brackets_in_an_answer_are_shown(make_settings, server):
    server.add(text(ANSWER, chunk_size=7))
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "generics?", READY_TIMEOUT)
        await wait_for(pilot, lambda: "<b>bold?</b>" in shown(app), what="the whole answer on screen")
        on_screen = shown(app)
        for fragment in ("List<String>", "Vec<T>", "<div>", "in <module>", "Option<u8>"):
            assert fragment in on_screen, fragment


PLAIN_LINES = "\n".join(f"row-{n:03} value {n * 7}" for n in range(1, 6))


async def test_an_answer_of_plain_lines_keeps_its_lines(make_settings, server):
    """A single newline is a line break on screen, not a space: rows the model listed stay rows
    (with Markdown's soft breaks they ran together into one paragraph)."""
    server.add(text(PLAIN_LINES + "\n\nA list:\n- one\n- two", chunk_size=9))
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "list the rows", READY_TIMEOUT)
        await wait_for(pilot, lambda: "two" in shown(app), what="the whole answer on screen")
        lines = shown(app).splitlines()
        for n in range(1, 6):
            assert f"row-{n:03} value {n * 7}" in lines, lines
