"""Cairn's approval questions (agent/tools/permissions.py) asked of the editor as ACP
permission requests: the options the request allows (a protected target offers only once
and deny), the editor's choice mapped back to a decision. A cancelled request is a denial.
exit-plan-mode's plan is asked the same way (the plan as the call's content), its three
answers as options; the editor has no field for feedback, so "keep planning" carries none."""

from __future__ import annotations

from typing import Any

from acp import text_block, tool_content
from acp.schema import PermissionOption, ToolCallUpdate

from agent.tools.modes import PlanReview
from agent.tools.permissions import ApprovalRequest, Decision

OPTIONS: dict[Decision, tuple[str, str]] = {
    "once": ("allow_once", "Allow once"),
    "always": ("allow_always", "Always allow in this session"),
    "deny": ("reject_once", "Deny"),
}
# exit-plan-mode's answers: option id → (kind, name, the review it stands for).
PLAN_OPTIONS: dict[str, tuple[Any, str, PlanReview]] = {
    "acceptEdits": ("allow_always", "Yes, and auto-accept edits", PlanReview(approved=True, mode="acceptEdits")),
    "default": ("allow_once", "Yes, and ask before edits", PlanReview(approved=True, mode="default")),
    "plan": ("reject_once", "No, keep planning", PlanReview(approved=False)),
}


class EditorApprover:
    """One session's approver: asks `conn` (the editor), naming the tool call that asked."""

    def __init__(self, conn: Any, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id
        self.current_call_id: str | None = None  # the running tool call (tools run one at a time)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        choices = [c for c in request.choices if c in OPTIONS]
        options = [PermissionOption(option_id=c, kind=OPTIONS[c][0], name=OPTIONS[c][1]) for c in choices]
        detail = request.detail + "".join(f"\n\n{text}" for text in (request.reason, request.note) if text)
        call = ToolCallUpdate(
            tool_call_id=self.current_call_id or f"approval-{request.key}",
            title=request.title,
            raw_input={"tool": request.tool, "kind": request.kind, "detail": detail},
        )
        response = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None)
        return chosen if getattr(outcome, "outcome", None) == "selected" and chosen in choices else "deny"

    async def review_plan(self, plan: str) -> PlanReview:
        """The `plan_review` of an editor session: approve (and how to go on), or keep planning."""
        options = [
            PermissionOption(option_id=key, kind=kind, name=name) for key, (kind, name, _) in PLAN_OPTIONS.items()
        ]
        call = ToolCallUpdate(
            tool_call_id=self.current_call_id or "exit-plan-mode",
            title="Ready to code? Review the plan",
            kind="switch_mode",
            content=[tool_content(text_block(plan))],
            raw_input={"plan": plan},
        )
        response = await self.conn.request_permission(session_id=self.session_id, tool_call=call, options=options)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None)
        if getattr(outcome, "outcome", None) == "selected" and chosen in PLAN_OPTIONS:
            return PLAN_OPTIONS[chosen][2]
        return PlanReview(approved=False)
