"""Context management in the TUI (seed 001): the condense marker, dimming, the truncation and
failure notices, summaries in a resumed history, and /compact end to end against the fake server."""

from __future__ import annotations

from agent.session.models import ContextEvent, Message, ToolCall
from agent.turn.events import CondenseStarted, ContextManaged, TurnFinished
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import AssistantMessage, Notice, UserMessage
from agent.ui.widgets.command_text import shown_user_text
from agent.ui.widgets.condensed import CondensedMarker, marker_title
from tests.fakes.llm_server import hang, text
from tests.ui.conftest import run_prompt, send, wait_for, wait_ready

SIZE = (120, 36)
SUMMARY_TEXT = "## Summary\nThe user asked about parsers; the parser was fixed in src/parse.py."


def condense_event(**overrides) -> ContextEvent:
    fields = dict(
        session_id="s",
        action="condense",
        trigger="auto",
        outcome="ok",
        tokens_before=120_431,
        tokens_after=8_210,
        duration_ms=3_200,
        summary_id="sum-1",
    )
    fields.update(overrides)
    return ContextEvent(**fields)


def truncate_event(**overrides) -> ContextEvent:
    fields = dict(
        session_id="s",
        action="truncate",
        trigger="auto",
        outcome="ok",
        tokens_before=60_000,
        tokens_after=40_000,
        detail={"target": 50_000, "messages_deleted": 12, "calls_removed": 0, "results_folded": 0, "files_folded": 0},
    )
    fields.update(overrides)
    return ContextEvent(**fields)


def summary_message(**condensed) -> Message:
    meta = dict(
        first_id="a",
        last_id="b",
        count=14,
        tokens_before=120_431,
        tokens_after=8_210,
        automatic=True,
        instructions=None,
    )
    meta.update(condensed)
    return Message(id="sum-1", role="user", kind="summary", content=SUMMARY_TEXT, meta={"condensed": meta})


def notices(app, kind: str | None = None) -> list[str]:
    return [n.text for n in app.chat.query(Notice) if kind is None or n.kind == kind]


def markers(app) -> list[CondensedMarker]:
    return list(app.chat.query(CondensedMarker))


async def expand(pilot, marker: CondensedMarker) -> str:
    """Open the marker; returns the summary text it shows."""
    marker.query_one("Collapsible").collapsed = False
    await pilot.pause()
    return str(marker.query_one(".condensed-summary").render())


# -- pure formatting ------------------------------------------------------------------------
def test_marker_title():
    assert (
        marker_title("auto", 120_431, 8_210, 3_200)
        == "── Context condensed (auto) · history 120,431 → 8,210 tokens (−93%) · 3.2 s ──"
    )
    assert marker_title("manual", 1000, 1000) == "── Context condensed (manual) · history 1,000 → 1,000 tokens (+0%) ──"
    assert marker_title("manual", None, None) == "── Context condensed (manual) ──"


def test_shown_user_text_for_command_blocks():
    appended = '<command name="fix">\nFix what the user names.\n</command>\n\nthe flaky test'
    assert shown_user_text(appended) == "/fix the flaky test"
    substituted = '<command name="review">\nReview src/x.py for bugs.\n</command>'
    assert shown_user_text(substituted) == "/review"  # the template is unknown: the name only
    bodies = {"review": "Review $ARGUMENTS for bugs."}
    assert shown_user_text(substituted, bodies.get) == "/review src/x.py"
    assert shown_user_text("plain <command> text", bodies.get) == "plain <command> text"


# -- rendering from events ----------------------------------------------------------------------
async def test_condense_marker_dims_what_came_before(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        chat = app.chat
        before = [chat.add_user("fix the parser"), chat.tool_started(ToolCall(id="c1", name="filesystem-read"))]
        await pilot.pause()

        app.handle_event(CondenseStarted(trigger="auto", tokens=120_431))
        await pilot.pause()
        assert "Condensing context…" in app.status.render_text().plain

        app.handle_event(ContextManaged(event=condense_event(), summary=summary_message()))
        await pilot.pause()
        assert "Condensing context" not in app.status.render_text().plain
        [marker] = markers(app)
        # The summary's stored numbers: the same marker a resumed history shows.
        assert marker.text == "── Context condensed (auto) · history 120,431 → 8,210 tokens (−93%) ──"
        assert marker.text == CondensedMarker.from_summary(summary_message()).text
        assert marker.text in str(marker.query_one("CollapsibleTitle").render())
        assert all(w.has_class("condensed") for w in before)
        assert not marker.has_class("condensed")
        # The summary body is built on first expand only.
        assert not marker.query(".condensed-summary")
        assert "the parser was fixed" in await expand(pilot, marker)
        assert "Summary of 14 messages" in str(marker.query_one(".condensed-about").render())

        after = chat.add_user("and now the lexer")
        await pilot.pause()
        assert not after.has_class("condensed")
        # A second condense dims the first marker too (its summary was folded into the new one).
        app.handle_event(ContextManaged(event=condense_event(trigger="overflow", duration_ms=0), summary=None))
        await pilot.pause()
        first, second = markers(app)
        assert first.has_class("condensed") and after.has_class("condensed")
        assert second.text == "── Context condensed (overflow) · history 120,431 → 8,210 tokens (−93%) ──"


async def test_failed_condense_and_truncation_once_per_turn(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.handle_event(CondenseStarted(trigger="auto", tokens=60_000))
        failed = condense_event(
            outcome="failed", tokens_after=60_000, error="Condensing failed: the provider refused the request"
        )
        app.handle_event(ContextManaged(event=failed))
        await pilot.pause()
        assert "Condensing context" not in app.status.render_text().plain
        assert notices(app, "warning") == [
            "Condensing failed: the provider refused the request. Falling back to truncating the request."
        ]
        assert not markers(app)

        for _ in range(3):  # every request of a long turn may be shortened: one line says so
            app.handle_event(ContextManaged(event=truncate_event()))
        await pilot.pause()
        line = (
            "Request shortened for the model: 60,000 → 40,000 tokens "
            "(12 older messages left out; history keeps everything)"
        )
        assert notices(app, "info") == [line]

        app.handle_event(TurnFinished(status="ok"))  # the next turn may say it again
        app.handle_event(
            ContextManaged(
                event=truncate_event(
                    outcome="partial",
                    tokens_after=52_000,
                    detail={"target": 50_000, "messages_deleted": 1, "calls_removed": 3, "results_folded": 2},
                )
            )
        )
        await pilot.pause()
        assert notices(app, "info")[1] == (
            "Request shortened for the model: 60,000 → 52,000 tokens (1 older message left out; "
            "3 tool calls dropped; 2 file reads folded to outlines; still over the 50,000-token target; "
            "history keeps everything)"
        )


async def test_history_shows_summary_as_marker_and_dims_condensed(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        gone = {"condensed_by": "sum-1"}
        history = [
            Message(role="user", content="fix the parser", meta=dict(gone)),
            Message(
                role="assistant",
                content="Reading it.",
                meta=dict(gone),
                tool_calls=[ToolCall(id="c1", name="filesystem-read", arguments='{"filePath": "p.py"}')],
            ),
            Message(role="tool", tool_call_id="c1", content="1→x = 1", meta=dict(gone)),
            Message(role="assistant", content="Fixed.", meta=dict(gone)),
            summary_message(automatic=False, instructions="keep the file names"),
            Message(role="user", content="now the lexer"),
            Message(role="assistant", content="On it."),
        ]
        app.chat.show_history(history)
        await pilot.pause()
        kinds = [type(w).__name__ for w in app.chat.children]
        assert kinds == [
            "UserMessage",
            "AssistantMessage",
            "ToolBlock",
            "AssistantMessage",
            "CondensedMarker",
            "UserMessage",
            "AssistantMessage",
        ]
        widgets = list(app.chat.children)
        assert [w.has_class("condensed") for w in widgets] == [True] * 4 + [False] * 3
        [marker] = markers(app)
        assert marker.text == "── Context condensed (manual) · history 120,431 → 8,210 tokens (−93%) ──"
        # The summary is not shown as something the user typed.
        assert [u.text for u in app.chat.query(UserMessage)] == ["fix the parser", "now the lexer"]
        assert "the parser was fixed" in await expand(pilot, marker)
        assert "keep the file names" in str(marker.query_one(".condensed-about").render())


async def test_a_prompt_restated_after_the_summary_is_shown_once(make_settings):
    """Auto-condense keeps the unanswered prompt as the request's last user turn by storing it
    again after the summary (agent/context/condense.py); the chat shows it where it was typed."""
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        prompt = Message(role="user", content="now the lexer")
        history = [
            Message(role="user", content="fix the parser", meta={"condensed_by": "sum-1"}),
            Message(role="assistant", content="Fixed.", meta={"condensed_by": "sum-1"}),
            prompt,
            summary_message(automatic=True),
            Message(role="user", content="now the lexer", meta={"restated_from": prompt.id}),
            Message(role="assistant", content="On it."),
        ]
        app.chat.show_history(history)
        await pilot.pause()
        assert [u.text for u in app.chat.query(UserMessage)] == ["fix the parser", "now the lexer"]


# -- /compact against the fake server ---------------------------------------------------------
def summarise(seen: list[dict]):
    """A callable step: records the summary request and answers with a summary."""

    def step(request: dict):
        seen.append(request)
        return text("The user asked two questions about parsers; both were answered.")

    return step


async def test_compact_end_to_end_and_resumed(make_settings, server):
    server.add(text("Answer one."), text("Answer two."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "first question about parsers")
        await run_prompt(pilot, "second question about parsers")
        before = [w for w in app.chat.children if isinstance(w, (UserMessage, AssistantMessage))]
        assert len(before) == 4
        session_id = app.runtime.session.id

        seen: list[dict] = []
        server.add(summarise(seen))
        await run_prompt(pilot, "/compact keep the parser names")
        assert len(seen) == 1
        request_text = "\n".join(str(m.get("content")) for m in seen[0]["messages"])
        assert "keep the parser names" in request_text and "second question about parsers" in request_text
        [marker] = markers(app)
        assert marker.text.startswith("── Context condensed (manual) · ")
        assert "tokens (" in marker.text
        assert all(w.has_class("condensed") for w in before)
        assert "both were answered" in await expand(pilot, marker)
        assert not notices(app, "error") and not notices(app, "warning")
        # /compact is not something the user said to the model.
        assert [u.text for u in app.chat.query(UserMessage)] == [
            "first question about parsers",
            "second question about parsers",
        ]

        # The next request starts from the summary.
        server.add(text("Answer three."))
        await run_prompt(pilot, "third question")
        sent = "\n".join(str(m.get("content")) for m in server.requests[-1]["messages"])
        assert "both were answered" in sent
        new = app.chat.query(UserMessage).last()
        assert new.text == "third question" and not new.has_class("condensed")

    resumed = CairnApp(make_settings(), resume_id=session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: markers(resumed), what="the history")
        kinds = [(type(w).__name__, w.has_class("condensed")) for w in resumed.chat.children]
        assert kinds == [
            ("UserMessage", True),
            ("AssistantMessage", True),
            ("UserMessage", True),
            ("AssistantMessage", True),
            ("CondensedMarker", False),
            ("UserMessage", False),
            ("AssistantMessage", False),
        ]
        assert markers(resumed)[0].text.startswith("── Context condensed (manual) · ")


async def test_compact_refused_and_interrupted(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/compact")  # nothing to condense yet
        assert notices(app, "error") == ["Too few messages to condense."]
        assert not notices(app, "warning") and not markers(app)
        assert server.requests == []

        server.add(text("Answer one."), text("Answer two."))
        await run_prompt(pilot, "first")
        await run_prompt(pilot, "second")
        server.add(hang(30, text="The user"))
        await send(pilot, "/compact")
        await wait_for(
            pilot, lambda: "Condensing context…" in app.status.render_text().plain, what="the condensing status"
        )
        assert app.turn_running

        await send(pilot, "/compact again")  # one turn at a time: the text stays in the prompt
        assert app.prompt.text == "/compact again"
        await pilot.press("!")  # the cursor is at the end: typing continues the text
        assert app.prompt.text == "/compact again!"
        app.prompt.clear()

        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the interrupt")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Interrupted" in notices(app, "warning")
        assert not markers(app)
        assert "Condensing context" not in app.status.render_text().plain


async def test_marker_is_the_same_live_and_resumed_and_its_summary_reads_without_tags(make_settings):
    """The event counts the whole request, the summary's meta the range it replaced: the marker
    shows the stored numbers both ways. Expanded (Ctrl+O), the summary has no raw tags."""
    summary = summary_message(tokens_before=5_900, tokens_after=700)
    summary.content = (
        SUMMARY_TEXT + "\n\n<system-reminder>\n## Conversation archive\nIn context file history-1.\n</system-reminder>"
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.handle_event(ContextManaged(event=condense_event(tokens_before=6_258, tokens_after=1_100), summary=summary))
        await pilot.pause()
        [live] = markers(app)
        assert (
            live.text
            == CondensedMarker.from_summary(summary).text
            == "── Context condensed (auto) · history 5,900 → 700 tokens (−88%) ──"
        )
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: live.query(".condensed-summary"), what="the expanded summary")
        shown = str(live.query_one(".condensed-summary").render())
        assert "## Conversation archive" in shown and "system-reminder" not in shown
