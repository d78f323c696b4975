"""Cairn's approval questions (agent/tools/permissions.py) asked of the editor as ACP
permission requests: the options the request allows (a protected target offers only once
and deny), the editor's choice mapped back to a decision. A cancelled request is a denial."""

from __future__ import annotations

from typing import Any

from acp.schema import PermissionOption, ToolCallUpdate

from agent.tools.permissions import ApprovalRequest, Decision

OPTIONS: dict[Decision, tuple[str, str]] = {
    "once": ("allow_once", "Allow once"),
    "always": ("allow_always", "Always allow in this session"),
    "deny": ("reject_once", "Deny"),
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
