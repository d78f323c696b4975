"""exit-plan-mode: refused outside plan mode; in it, the user's answer moves the mode (or the
plan is recorded as the run's answer when nobody can review it)."""

from __future__ import annotations

import json

from agent.session.models import ToolCall
from agent.tools.base import ToolContext
from agent.tools.exit_plan_mode import NOBODY_TO_ASK, recorded_plan
from agent.tools.modes import PlanReview
from agent.tools.permissions import Permissions
from agent.tools.registry import default_registry

PLAN = "## Plan\n1. Edit `a.py`\n2. Run the tests\n"


def make_ctx(workspace, mode="plan", answer: PlanReview | None = None):
    asked: list[str] = []
    switched: list[str] = []

    async def review(plan: str) -> PlanReview:
        asked.append(plan)
        assert answer is not None
        return answer

    ctx = ToolContext(
        workspace=workspace,
        permissions=Permissions(None, workspace=workspace, mode=mode),
        plan_review=review if answer is not None else None,
        mode_changed=switched.append,
    )
    return ctx, asked, switched


async def run(ctx, **args):
    call = ToolCall(id="c1", name="exit-plan-mode", arguments=json.dumps(args))
    return await default_registry().execute(call, ctx)


async def test_outside_plan_mode_it_is_an_error(workspace):
    for mode in ("default", "acceptEdits"):
        ctx, asked, switched = make_ctx(workspace, mode=mode, answer=PlanReview(approved=True))
        res = await run(ctx, plan=PLAN)
        assert res.is_error and res.content.startswith("Error: not in plan mode")
        assert f"the mode is {mode}" in res.content and asked == [] and switched == []
        assert ctx.permissions.mode == mode


async def test_an_empty_plan_is_an_error(workspace):
    ctx, asked, _ = make_ctx(workspace, answer=PlanReview(approved=True))
    res = await run(ctx, plan="  \n")
    assert res.is_error and "plan is empty" in res.content and asked == []


async def test_approved_switches_the_mode_and_says_so(workspace):
    ctx, asked, switched = make_ctx(workspace, answer=PlanReview(approved=True, mode="acceptEdits"))
    res = await run(ctx, plan=PLAN)
    assert not res.is_error and asked == [PLAN.strip()]
    assert ctx.permissions.mode == "acceptEdits" and switched == ["acceptEdits"]
    assert res.content.startswith("The user approved the plan; the mode is now acceptEdits")
    assert res.content.endswith("Go ahead and implement it.")
    assert res.meta == {"plan": PLAN.strip(), "review": "approved", "mode": "acceptEdits"}
    ctx, _, switched = make_ctx(workspace, answer=PlanReview(approved=True))
    res = await run(ctx, plan=PLAN)
    assert ctx.permissions.mode == "default" and switched == ["default"] and "mode is now default" in res.content


async def test_keep_planning_passes_the_feedback_and_stays(workspace):
    ctx, _, switched = make_ctx(workspace, answer=PlanReview(approved=False, feedback=" Use a dataclass. "))
    res = await run(ctx, plan=PLAN)
    assert not res.is_error and ctx.permissions.mode == "plan" and switched == []
    assert "did not approve" in res.content and "Their feedback:\nUse a dataclass." in res.content
    assert res.meta["review"] == "keep_planning" and res.meta["feedback"] == "Use a dataclass."
    ctx, _, _ = make_ctx(workspace, answer=PlanReview(approved=False))
    res = await run(ctx, plan=PLAN)
    assert "They gave no reason" in res.content and ctx.permissions.mode == "plan"


async def test_without_a_reviewer_the_plan_is_recorded_and_the_mode_stays(workspace):
    ctx, _, switched = make_ctx(workspace)
    res = await run(ctx, plan=PLAN)
    assert not res.is_error and res.content == NOBODY_TO_ASK and "end your turn" in res.content
    assert ctx.permissions.mode == "plan" and switched == []
    assert recorded_plan(res.meta) == PLAN.strip()
    assert recorded_plan({"plan": PLAN, "review": "approved"}) is None and recorded_plan({}) is None
