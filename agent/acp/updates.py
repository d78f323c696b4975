"""Cairn's loop events, and a stored session's history, as ACP session updates.

The editor draws what it is sent: the model's thinking as agent thought chunks, streamed text
as agent message chunks, each tool call as a `tool_call` (in progress, with its arguments) then
a `tool_call_update` (completed or failed, with the result text), the todo list a todo-write
set as a `plan` (the whole list each time), a permission mode change as a
`current_mode_update`, a background task as a `tool_call` of its own (`task-N`) until it
ends. A loaded session is replayed the same way, message by message, as the protocol asks of
`session/load`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import update_current_mode

from agent.session.models import Message, ToolCall
from agent.tools.todos import todos_of
from agent.turn.events import (
    AssistantFinished,
    ContextManaged,
    Event,
    HookActed,
    LimitReached,
    ModeChanged,
    Notice,
    Retrying,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnError,
)

# A tool result shown in the editor: whole up to here (the store keeps it all).
MAX_SHOWN_RESULT_CHARS = 20_000
TOOL_KINDS = {
    "filesystem-read": "read",
    "context-read": "read",
    "context-tail": "read",
    "context-list": "read",
    "filesystem-edit": "edit",
    "filesystem-create": "edit",
    "filesystem-search": "search",
    "filesystem-find": "search",
    "context-grep": "search",
    "terminal-execute": "execute",
    "web-fetch": "fetch",
    "exit-plan-mode": "switch_mode",
    "todo-write": "think",
}
PRIORITIES: dict[Any, Literal["high", "medium", "low"]] = {"high": "high", "medium": "medium", "low": "low"}


def _arguments(call: ToolCall) -> Any:
    try:
        return json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return call.arguments


def tool_title(call: ToolCall) -> str:
    """`terminal-execute: pytest -x`, `filesystem-read: src/app.py`: what the editor lists."""
    args = _arguments(call)
    if isinstance(args, dict):
        subject = (
            args.get("command") or args.get("filePath") or args.get("pattern") or args.get("url") or args.get("id")
        )
        if isinstance(subject, (str, list)):
            shown = subject if isinstance(subject, str) else ", ".join(str(s) for s in subject)
            return f"{call.name}: {' '.join(shown.split())[:200]}"
    return call.name


def started(call: ToolCall):
    return start_tool_call(
        call.id,
        tool_title(call),
        kind=TOOL_KINDS.get(call.name, "other"),  # type: ignore[arg-type]
        status="in_progress",
        raw_input=_arguments(call),
    )


def finished(call_id: str, result: Message):
    text = result.content or ""
    if len(text) > MAX_SHOWN_RESULT_CHARS:
        text = (
            text[:MAX_SHOWN_RESULT_CHARS]
            + f"\n… ({len(result.content or '') - MAX_SHOWN_RESULT_CHARS:,} more characters)"
        )
    failed = result.status != "ok" or text.startswith("Error:")
    return update_tool_call(
        call_id, status="failed" if failed else "completed", content=[tool_content(text_block(text))] if text else None
    )


def plan(result: Message) -> list:
    """The editor's plan view: the whole todo list each time a todo-write result sets it, as
    the protocol's `plan` update asks (opencode's `priority` kept, else medium)."""
    todos = todos_of(result)
    if todos is None:
        return []
    entries = [
        plan_entry(t["content"], priority=PRIORITIES.get(t.get("priority"), "medium"), status=t["status"])
        for t in todos
    ]
    return [update_plan(entries)]


def for_event(event: Event) -> list:
    """The updates one loop event becomes (none for events the editor has no use for)."""
    if isinstance(event, TextDelta):
        return [update_agent_message_text(event.text)]
    if isinstance(event, ThinkingDelta):
        return [update_agent_thought_text(event.text)]
    if isinstance(event, ToolStarted):
        return [started(event.call)]
    if isinstance(event, ToolFinished):
        if event.message.meta.get("limit") or event.message.meta.get("interrupted"):
            return [started(event.call), finished(event.call.id, event.message)]  # never announced as started
        return [finished(event.call.id, event.message), *plan(event.message)]
    if isinstance(event, (TurnError, Notice, LimitReached, HookActed)):
        prefix = "Error: " if isinstance(event, TurnError) else "Note: "
        return [update_agent_message_text(f"\n\n{prefix}{event.message}\n")]
    if isinstance(event, ModeChanged):  # switched here, or a plan approved with exit-plan-mode
        return [update_current_mode(event.mode)]
    if isinstance(event, Retrying):
        return [update_agent_message_text(f"\n(retrying in {event.delay:.0f} s: {event.reason})\n")]
    if isinstance(event, ContextManaged) and event.event.action == "condense" and event.event.outcome == "ok":
        return [
            update_agent_message_text(
                f"\n(context condensed: {event.event.tokens_before:,} → {event.event.tokens_after:,} tokens)\n"
            )
        ]
    if isinstance(event, TaskStarted):  # a background task: a call of its own, running until it ends
        return [
            start_tool_call(
                f"task-{event.task_id}",
                f"background task {event.task_id}: {event.command}",
                kind="execute",
                status="in_progress",
            )
        ]
    if isinstance(event, TaskFinished):
        failed = event.stopped_by is None and event.exit_code != 0
        text = tool_content(text_block(event.message))
        return [update_tool_call(f"task-{event.task_id}", status="failed" if failed else "completed", content=[text])]
    if isinstance(event, AssistantFinished):
        return []
    return []


def for_history(messages: list[Message]) -> list:
    """A stored session's active path as the updates that would have drawn it."""
    calls: dict[str, ToolCall] = {}
    updates: list = []
    for message in messages:
        if message.role == "user" and message.content:
            updates.append(update_user_message_text(message.content))
        elif message.role == "assistant":
            thinking = message.meta.get("thinking")
            if isinstance(thinking, str) and thinking:
                updates.append(update_agent_thought_text(thinking))
            if message.content:
                updates.append(update_agent_message_text(message.content))
            for made in message.tool_calls:
                calls[made.id] = made
                updates.append(started(made))
        elif message.role == "tool" and message.tool_call_id:
            call = calls.get(message.tool_call_id)
            if call is None:
                continue
            updates.append(finished(call.id, message))
            updates += plan(message)
    return updates
