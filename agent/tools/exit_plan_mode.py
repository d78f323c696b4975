"""`exit-plan-mode`: the model's plan put to the user, the one way out of plan mode.

Plan mode exists so the user reads the plan before anything changes; so only the user's
answer moves the mode (approve, and work in the default or the accept-edits mode, or keep
planning with what they said). The front end asks through `ToolContext.plan_review`. With
nobody to ask (`cairn -p`), the plan is the run's answer: it is recorded in the result's
meta (the headless printers print it) and the mode stays plan, so nothing runs unreviewed.
"""

from __future__ import annotations

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.modes import MODE_INFO

TOOL_NAME = "exit-plan-mode"
MAX_PLAN_CHARS = 100_000
RECORDED = "recorded"  # meta["review"] of a plan nobody reviewed: the run's answer

NOBODY_TO_ASK = (
    "Nobody can review the plan in this run, so it was recorded as the run's answer for the user. "
    "You stay in plan mode: end your turn now, without repeating the plan."
)


class ExitPlanArgs(ToolArgs):
    plan: str = Field(
        max_length=MAX_PLAN_CHARS,
        description="The plan, in Markdown.",
    )


class ExitPlanMode(Tool):
    name = TOOL_NAME
    description = tool_prompt(name)
    Args = ExitPlanArgs

    async def run(self, args: ExitPlanArgs, ctx: ToolContext) -> ToolResult:
        mode = ctx.permissions.mode
        if mode != "plan":
            raise ToolError(
                f"not in plan mode (the mode is {mode}): there is no plan to approve. Go ahead with the task."
            )
        plan = args.plan.strip()
        if not plan:
            raise ToolError("plan is empty: write the plan in Markdown")
        if ctx.plan_review is None:
            return ToolResult(content=NOBODY_TO_ASK, meta={"plan": plan, "review": RECORDED})
        review = await ctx.plan_review(plan)
        if not review.approved:
            said = review.feedback.strip()
            heard = f"Their feedback:\n{said}" if said else "They gave no reason; ask them what to change if unsure."
            return ToolResult(
                content=(
                    f"The user did not approve the plan and wants to keep planning (plan mode stays on). {heard}\n"
                    "Revise the plan, reading more if needed, and present it again with exit-plan-mode."
                ),
                meta={"plan": plan, "review": "keep_planning", "feedback": said},
            )
        ctx.permissions.mode = review.mode
        if ctx.mode_changed is not None:
            ctx.mode_changed(review.mode)
        return ToolResult(
            content=(
                f"The user approved the plan; the mode is now {review.mode} ({MODE_INFO[review.mode][1].lower()}). "
                "Go ahead and implement it."
            ),
            meta={"plan": plan, "review": "approved", "mode": review.mode},
        )


def recorded_plan(meta: dict) -> str | None:
    """The plan a headless run recorded as its answer (an exit-plan-mode result's meta), or None."""
    plan = meta.get("plan")
    return plan if meta.get("review") == RECORDED and isinstance(plan, str) else None
