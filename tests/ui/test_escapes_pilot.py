"""An answer full of terminal escapes draws as text: live, resumed, and in every chat widget.

Issue 43: a streamed answer wrote OSC 52 (the clipboard), OSC 0 (the window title) and CSI 2J
to the terminal, and reopening the session did it again. What is checked here is what Textual
would write: every segment of every line every widget renders (tests/hostile/test_render.py's
`rendered_text`), for the answer streamed from the scripted server in small chunks (so the
sequences are cut between chunks), and for the same session resumed.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App

from agent.session.models import Message
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import AssistantMessage, ChatView
from agent.ui.widgets.condensed import CondensedMarker
from agent.ui.widgets.header import header_text
from agent.ui.widgets.shell_block import ShellBlock
from agent.ui.widgets.status import StatusBar
from agent.ui.widgets.thinking import ThinkingBlock
from tests.fakes.llm_server import text
from tests.hostile.test_render import rendered_text
from tests.hostile.test_terminal_text import FORBIDDEN, HOSTILE_TEXT
from tests.ui.conftest import run_prompt, wait_for, wait_ready

SIZE = (120, 40)
HOSTILE_ANSWER = (
    "Start-of-answer \x1b]52;c;cm0gLXJmIH4K\x07 clip \x1b]0;PWNED-TITLE\x07 title "
    "\x1b]2;PWNED-ST\x1b\\ st \x1b[2J\x1b[H cleared \x9b31m c1 \x9d0;C1-TITLE\x9c "
    "\x1bP+q544e\x1b\\ dcs \x1b_Gapc\x1b\\ apc \x1bc reset line\rover \u202eevil\u202c "
    "entity &#x202e; end-of-answer\n\n```\ncode \x1b[31mred\x1b[0m\n```\n"
)


def forbidden_in(app: App) -> set[str]:
    return set(rendered_text(app)) & FORBIDDEN


def markdown_shown(app: App) -> str:
    return "\n".join(str(w.render()) for w in app.chat.query("MarkdownBlock"))


async def test_a_streamed_answer_and_its_resume_draw_no_escape(make_settings, server):
    server.add(text(HOSTILE_ANSWER, chunk_size=3))  # every sequence cut between chunks
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "say it")
        await wait_for(pilot, lambda: "end-of-answer" in markdown_shown(app), what="the whole answer")
        await pilot.pause()
        assert forbidden_in(app) == set()
        shown = markdown_shown(app)
        assert "␛]52;c;cm0gLXJmIH4K␇" in shown and "␛]0;PWNED-TITLE␇" in shown and "␛[2J" in shown
        assert "\\x9b31m" in shown and "line␍over" in shown and "\\u202eevil" in shown
        assert "entity \\u202e end-of-answer" in shown  # an entity is decoded in parsing: inert after it
        assert app.chat.assistant_messages[-1].text == HOSTILE_ANSWER  # the store keeps what came
        await app.quit_app()

    again = CairnApp(make_settings(), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: "end-of-answer" in markdown_shown(again), what="the resumed answer")
        await pilot.pause()
        assert forbidden_in(again) == set()
        assert "␛]52;c;cm0gLXJmIH4K␇" in markdown_shown(again)


class ChatApp(App):
    def compose(self):
        yield ChatView(id="chat")
        yield StatusBar(id="status")


async def test_every_chat_widget_draws_outside_text_inert():
    """The other places a model's, a tool's or a stored session's text reaches the chat: the
    thinking, a prompt (stored, imported or pasted), a notice quoting an error, a condense
    summary, a `!command`'s output, the session title and model in the status line."""
    hostile = "x \x1b]0;T\x07 \x1b[2J \x9b1m \u202e y"
    app = ChatApp()
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        thinking = ThinkingBlock(hostile)
        thinking.collapsed = False
        shell = ShellBlock(hostile)
        chat.show_history(
            [
                Message(role="user", content=hostile),
                Message(role="assistant", content=hostile, meta={"thinking": hostile}),
            ]
        )
        chat.add_block(thinking)
        chat.add_block(shell)
        chat.add_notice(hostile, "error")
        chat.add_block(CondensedMarker(trigger="manual", tokens_before=10, tokens_after=5, summary=hostile))
        app.query_one(StatusBar).set_info(title=hostile, model=hostile)
        await pilot.pause()
        shell.finish(hostile, hostile, {"exit_code": 1})
        for marker in chat.query(CondensedMarker):
            marker.query_one("Collapsible").collapsed = False  # type: ignore[attr-defined]
        for message in chat.query(AssistantMessage):
            message.toggle_thinking()
        await pilot.pause()
        await pilot.pause()
        shown = rendered_text(app)
        assert set(shown) & FORBIDDEN == set()
        assert shown.count("␛]0;T␇") >= 6, shown
    assert not set(str(header_text(Path("/w\x1b[2J"), hostile, False))) & FORBIDDEN


def test_the_pickers_rows_are_inert():
    """`/resume`'s titles (the model's subagent tasks, imported titles, first prompts) and the
    rewind menu's prompts, as their rows are drawn."""
    from agent.session.branches import SessionBranch
    from agent.session.models import Session, SessionSummary
    from agent.session.rewind import RewindPoint
    from agent.ui.screens.picker import row
    from agent.ui.screens.rewind import branch_row, turn_row

    hostile = "t \x1b]0;T\x07 \x1b[2J \x9b1m \u202e y"
    summary = SessionSummary(session=Session(cwd="/w\x1b[2J", title=hostile), first_prompt=hostile, message_count=1)
    point = RewindPoint(message_id="m", created_at=0, text=hostile, preview=hostile, files_changed=0)
    branch = SessionBranch(leaf_id="l", created_at=0, messages=2, preview=hostile)
    for shown in (row(summary), row(summary, width=60), turn_row(point), branch_row(branch)):
        assert not set(shown.plain) & FORBIDDEN, repr(shown.plain)
        assert "␛]0;T␇" in shown.plain


@settings(max_examples=200, deadline=None)
@given(
    source=st.lists(
        st.sampled_from(["&#x1b;", "&#13;", "&#x202e;", "&#x2066;", "&#12;", "&#x9b;", "`", "\n", "[a](b)", "*"])
        | HOSTILE_TEXT,
        max_size=12,
    ).map("".join)
)
def test_what_the_answer_parser_produces_is_inert(source):
    """Entities are decoded in parsing, after the answer was made inert: every token the chat's
    Markdown reads is inert too."""
    from agent.fs.terminal_text import inert
    from agent.ui.widgets.answer_markdown import text_only_markdown

    for token in text_only_markdown().parse(inert(source)):
        for part in [token, *(token.children or ())]:
            assert not set(part.content) & FORBIDDEN, (source, part)
