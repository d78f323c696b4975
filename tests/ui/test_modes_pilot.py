"""Permission modes in the TUI: Shift+Tab cycles them and the status bar shows the one in force;
exit-plan-mode opens the plan review, whose answer switches the mode and reaches the model."""

from __future__ import annotations

import json

from agent.ui.app import CairnApp
from agent.ui.screens.plan_review import PlanReviewScreen
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

PLAN = "## Plan\n\n" + "\n".join(f"{n}. Step {n}: change `module_{n}.py`" for n in range(1, 41))


def status_text(app) -> str:
    return app.status.render_text().plain


def tool_result(request: dict) -> str:
    [content] = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    return content


async def wait_review(pilot) -> None:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, PlanReviewScreen), READY_TIMEOUT, "the plan review")


def choices_fully_shown(app) -> bool:
    """Every choice of the review is on screen, the long plan scrolling above them."""
    choices = app.screen.query_one("#plan-choices")
    box = app.screen.query_one("#plan-box")
    return (
        choices.region.height >= choices.virtual_size.height > 0
        and choices.region.bottom <= box.content_region.bottom
        and box.region.bottom <= app.screen.size.height
    )


async def test_shift_tab_cycles_the_modes_and_the_status_bar_shows_them(make_settings):
    app = CairnApp(make_settings())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        assert app.runtime.mode == "default" and "plan mode" not in status_text(app)
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            await pilot.pause()
            seen.append((app.runtime.mode, status_text(app)))
        assert [mode for mode, _ in seen] == ["acceptEdits", "plan", "default"]
        assert "⏵⏵ accept edits" in seen[0][1] and "⏸ plan mode" in seen[1][1]
        assert "accept edits" not in seen[2][1] and "plan mode" not in seen[2][1]
        assert app.focused is app.prompt  # the prompt keeps the focus


async def test_exit_plan_mode_asks_and_approving_with_accept_edits_switches(make_settings, server, workspace):
    server.add(
        tool_calls([("c1", "exit-plan-mode", json.dumps({"plan": PLAN}))]),
        tool_calls([("c2", "filesystem-create", json.dumps({"filePath": "made.txt", "content": "x\n"}))]),
        text("Done."),
    )
    app = CairnApp(make_settings(permission_mode="plan"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert "⏸ plan mode" in status_text(app)
        await send(pilot, "plan it")
        await wait_review(pilot)
        await wait_for(pilot, lambda: choices_fully_shown(app), what="the choices to fit at 80×24")
        choices = app.screen.query_one("#plan-choices")
        assert choices.highlighted == 1 and str(choices.get_option_at_index(1).prompt).startswith("Yes, and ask")
        assert "Step 1: change" in app.screen.query_one("#plan-body").source
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
        assert app.runtime.mode == "acceptEdits" and "⏵⏵ accept edits" in status_text(app)
        # the next edit ran without asking
        assert (workspace / "made.txt").read_text() == "x\n"
    result = tool_result(server.requests[1])
    assert result.startswith("The user approved the plan; the mode is now acceptEdits")


async def test_keep_planning_sends_the_feedback_and_stays_in_plan_mode(make_settings, server):
    server.add(tool_calls([("c1", "exit-plan-mode", json.dumps({"plan": "1. Do it"}))]), text("Revising."))
    app = CairnApp(make_settings(permission_mode="plan"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "plan it")
        await wait_review(pilot)
        await pilot.press("n")
        feedback = app.screen.query_one("#plan-feedback")
        await wait_for(pilot, lambda: app.screen.focused is feedback, what="the feedback input")
        await pilot.press(*"Use a dataclass")  # its letters are text, not choices
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
        assert app.runtime.mode == "plan" and "⏸ plan mode" in status_text(app)
    result = tool_result(server.requests[1])
    assert "did not approve" in result and "Their feedback:\nUse a dataclass" in result


def test_the_chat_shows_the_plan_and_the_answer():
    from agent.session.models import Message, ToolCall
    from agent.ui.widgets.tool_render import format_args, result_body, summarize_result

    call = ToolCall(id="c1", name="exit-plan-mode", arguments=json.dumps({"plan": "\n## Rename f\n1. Edit a.py"}))
    assert format_args(call) == "Rename f"
    meta = {"plan": "## Rename f\n1. Edit a.py", "review": "approved", "mode": "acceptEdits"}
    result = Message(role="tool", tool_name="exit-plan-mode", content="The user approved the plan…", meta=meta)
    assert summarize_result(result) == "approved · acceptEdits mode"
    assert result_body(result) == "## Rename f\n1. Edit a.py"  # the plan, not what the model was told
    kept = result.model_copy(update={"meta": {"plan": "p", "review": "keep_planning", "feedback": ""}})
    assert summarize_result(kept) == "keep planning"
