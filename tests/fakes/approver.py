"""A stand-in for the UI's approval dialog: records each request, answers with a fixed decision."""

from __future__ import annotations


class FakeApprover:
    def __init__(self, decision: str = "once") -> None:
        self.decision = decision
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.decision
