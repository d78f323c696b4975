"""THE single API-build point (SPEC §4): stored history in, provider-ready request out.

Every request — a normal turn, a resumed session, headless mode — is built here. It is a
pure function of (history, now, settings, tools, system prompt): it never mutates
`history`, never does I/O, and gives the same output for the same input.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agent.config import Settings
from agent.context.passes import active_path, externalize, orphans
from agent.context.tokens import TokenCounter, counter_for
from agent.session.models import Message


class PassReport(BaseModel):
    name: str
    changed: int
    tokens_before: int
    tokens_after: int


class TokenBreakdown(BaseModel):
    system: int = 0
    tools: int = 0
    messages: int = 0

    @property
    def total(self) -> int:
        return self.system + self.tools + self.messages


class BuildResult(BaseModel):
    messages: list[dict[str, Any]]
    report: list[PassReport] = Field(default_factory=list)
    tokens: TokenBreakdown = Field(default_factory=TokenBreakdown)


def _count(counter: TokenCounter, messages: list[Message]) -> int:
    return counter.count_messages([m.to_api() for m in messages])


def build_api_messages(
    history: list[Message],
    *,
    now_ms: int,
    settings: Settings,
    tools: list[dict[str, Any]] | None = None,
    system_prompt: str | None = None,
) -> BuildResult:
    """Run the passes in SPEC order on a copy of the active path and count the result."""
    del now_ms  # used by the time-based passes (seed 003)
    counter = counter_for(settings.context.tokenizer)
    messages = list(history)
    report: list[PassReport] = []

    def run(name: str, fn, *args, **kwargs) -> None:
        nonlocal messages
        before = _count(counter, messages)
        messages, changed = fn(messages, *args, **kwargs)
        after = _count(counter, messages) if changed else before
        report.append(PassReport(name=name, changed=changed, tokens_before=before, tokens_after=after))

    run(active_path.NAME, active_path.apply)
    run(orphans.NAME, orphans.apply)
    limit = settings.context.max_tool_output_chars
    run(externalize.NAME, externalize.apply, limit=limit, preview=limit)

    api: list[dict[str, Any]] = []
    if system_prompt:
        api.append({"role": "system", "content": system_prompt})
    body = [m.to_api() for m in messages]
    api.extend(body)
    tokens = TokenBreakdown(
        system=counter.count_messages(api[:1]) if system_prompt else 0,
        tools=counter.count_tools(tools or []),
        messages=counter.count_messages(body),
    )
    return BuildResult(messages=api, report=report, tokens=tokens)
