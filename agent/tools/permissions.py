"""Approval for commands, file changes and paths outside the workspace.

The UI (or headless mode) supplies an async approver; decisions of "always" are
remembered for the rest of the session under the request's key.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Literal

from pydantic import BaseModel

Decision = Literal["once", "always", "deny"]
ApprovalKind = Literal["command", "edit", "outside"]


class ApprovalRequest(BaseModel):
    tool: str
    kind: ApprovalKind
    title: str  # one line, e.g. "Run command" / "Edit src/app.py"
    detail: str = ""  # the command, a diff, the path…
    key: str  # what "always this session" covers, e.g. "edit" or "command:pytest"


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


class Permissions:
    def __init__(self, approver: Approver | None = None, *, yolo: bool = False) -> None:
        self.approver = approver
        self.yolo = yolo
        self.always: set[str] = set()

    async def check(self, request: ApprovalRequest) -> bool:
        if self.yolo or request.key in self.always:
            return True
        if self.approver is None:
            return False
        decision = await self.approver(request)
        if decision == "always":
            self.always.add(request.key)
        return decision in ("once", "always")
