"""`--output-format stream-json`: the loop's events as one JSON object per line, as they happen.

The schema is documented in docs/headless.md; every object has `type`. A consumer (a script,
a CI step, another agent) sees the session start, each piece of the model's thinking (a model
that reasons: `thinking`, before the answer's text), each text delta, each tool call with its
arguments and its result (after a todo-write, the whole todo list too), retries, condenses and
truncations, usage and cost per request, the end of each turn and one final `result` with the
exit code and Claude Code's result keys. Events the schema does not name are not written: adding one to
agent/turn/events.py never breaks a consumer's parser. Each line means to a parser what
json.dumps wrote, and is inert on a terminal: the DEL, C1 and bidi controls json.dumps leaves
raw are written as `\\u` escapes too (agent/fs/terminal_text.py).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from agent.fs.terminal_text import inert_json
from agent.headless.result import RunTally
from agent.tools.todos import TOOL_NAME as TODO_WRITE
from agent.tools.todos import todos_of
from agent.turn.events import (
    AssistantFinished,
    CondenseStarted,
    ContextManaged,
    Event,
    HookActed,
    LimitReached,
    Notice,
    Retrying,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
    UserMessage,
)

SCHEMA_VERSION = 1
# Tool output in a `tool_result` line: whole up to here, then cut (the store keeps it all).
MAX_RESULT_CHARS = 100_000


def _arguments(raw: str) -> Any:
    """The call's arguments as JSON when they parse (what a consumer wants), else the raw text."""
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw


def to_json(event: Event) -> dict[str, Any] | None:
    """The line for one loop event, or None for events the stream does not carry."""
    if isinstance(event, UserMessage):
        m = event.message
        return {"type": "user", "message_id": m.id, "parent_id": m.parent_id, "text": m.content or ""}
    if isinstance(event, TextDelta):
        return {"type": "text", "message_id": event.message_id, "text": event.text}
    if isinstance(event, ThinkingDelta):
        return {"type": "thinking", "message_id": event.message_id, "text": event.text}
    if isinstance(event, AssistantFinished):
        m = event.message
        answer: dict[str, Any] = {
            "type": "assistant",
            "message_id": m.id,
            "parent_id": m.parent_id,
            "status": m.status,
            "text": m.content or "",
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": _arguments(c.arguments)} for c in m.tool_calls],
            "finish_reason": m.meta.get("finish_reason"),
            "error": m.meta.get("error"),
        }
        thinking = m.meta.get("thinking")
        if isinstance(thinking, str) and thinking:  # the whole thinking text (never its signatures)
            answer["thinking"] = thinking
        return answer
    if isinstance(event, ToolStarted):
        c = event.call
        return {"type": "tool_call", "id": c.id, "name": c.name, "arguments": _arguments(c.arguments)}
    if isinstance(event, ToolFinished):
        m = event.message
        content = m.content or ""
        permission = m.meta.get("permission")
        if not isinstance(permission, dict):
            permission = {}
        return {
            "type": "tool_result",
            "id": event.call.id,
            "name": event.call.name,
            "status": m.status,
            "content": content[:MAX_RESULT_CHARS],
            "truncated": len(content) > MAX_RESULT_CHARS,
            "refused": permission.get("decision") == "refused",
        }
    if isinstance(event, Retrying):
        return {
            "type": "retry",
            "attempt": event.attempt,
            "max_attempts": event.max_attempts,
            "delay_s": round(event.delay, 3),
            "reason": event.reason,
        }
    if isinstance(event, CondenseStarted):
        return {"type": "condense_started", "trigger": event.trigger, "tokens": event.tokens}
    if isinstance(event, ContextManaged):
        e = event.event
        line: dict[str, Any] = {
            "type": "context",
            "action": e.action,
            "trigger": e.trigger,
            "outcome": e.outcome,
            "tokens_before": e.tokens_before,
            "tokens_after": e.tokens_after,
            "duration_ms": e.duration_ms,
            "error": e.error,
        }
        if event.summary is not None:
            line["summary"] = {"message_id": event.summary.id, "text": event.summary.content or ""}
        return line
    if isinstance(event, Notice):
        return {"type": "notice", "message": event.message}
    if isinstance(event, HookActed):  # a notice, with which hook did what
        return {"type": "notice", **event.model_dump(exclude={"type"})}
    if isinstance(event, TurnError):
        return {"type": "error", "message": event.message}
    if isinstance(event, LimitReached):
        return {
            "type": "limit",
            "limit": event.limit,
            "message": event.message,
            "exit_code": event.exit_code,
            "tool_call_id": event.tool_call_id,
        }
    if isinstance(event, TurnFinished):
        return {"type": "turn_end", "status": event.status}
    if isinstance(event, (TaskStarted, TaskFinished)):  # a background task (docs/headless.md)
        return event.model_dump()
    return None


def todo_line(event: Event) -> dict[str, Any] | None:
    """The whole todo list, after each todo-write that set it: a consumer shows the list
    without parsing the tool's arguments or its result text."""
    if not isinstance(event, ToolFinished) or event.call.name != TODO_WRITE:
        return None
    todos = todos_of(event.message)
    return None if todos is None else {"type": "todo", "todos": todos}


def usage_line(message, run_cost: float, session_cost: float) -> dict[str, Any] | None:
    """Per request, from the answer's stored usage (the provider's counts) and its price."""
    usage = message.meta.get("usage")
    if not isinstance(usage, dict):
        return None
    return {
        "type": "usage",
        "message_id": message.id,
        "model": message.meta.get("model"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cache_read_tokens": usage.get("cache_read_tokens"),
        "cache_write_tokens": usage.get("cache_write_tokens"),
        # Of completion_tokens, those spent thinking (when the provider says).
        **({"reasoning_tokens": usage["reasoning_tokens"]} if usage.get("reasoning_tokens") else {}),
        "cost": message.meta.get("cost") or 0.0,
        "run_cost": run_cost,
        "session_cost": session_cost,
    }


class StreamWriter:
    """Writes lines to `out` and flushes each: the consumer reads them as they happen."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, line: dict[str, Any]) -> None:
        try:
            self.out.write(inert_json(json.dumps(line, ensure_ascii=False)) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the consumer went away: the run still finishes and is stored
            pass


class StreamPrinter:
    """The run's event sink in stream-json mode; its tally is what the final `result` line
    says (agent/headless/result.py: Claude Code's result object, cairn's keys beside)."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.writer = StreamWriter(out)
        self.err = err
        self.tally = RunTally()
        self.session_cost_before: float | None = None  # read from the agent at the first user message
        self.session_cost_of = lambda: 0.0  # the agent's running session cost (set by the run)
        self.tasks_stopped: list[dict[str, Any]] = []  # background tasks the end of the run stopped

    def __call__(self, event: Event) -> None:
        if isinstance(event, UserMessage) and self.session_cost_before is None:
            self.session_cost_before = self.session_cost_of()
        self.tally(event)
        line = to_json(event)
        if line is not None:
            self.writer.write(line)
        if isinstance(event, TaskFinished) and event.stopped_by == "session_end":
            self.tasks_stopped.append({"task_id": event.task_id, "command": event.command})
        todos = todo_line(event)
        if todos is not None:
            self.writer.write(todos)
        if isinstance(event, AssistantFinished) and event.message.status == "ok":
            run_cost = self.tally.run_cost
            usage = usage_line(event.message, run_cost, (self.session_cost_before or 0.0) + run_cost)
            if usage is not None:
                self.writer.write(usage)

    def result(self, *, exit_code: int, session_id: str | None, message: str | None = None) -> None:
        line = self.tally.result(exit_code=exit_code, session_id=session_id, message=message)
        if self.tasks_stopped:
            line["background_tasks_stopped"] = self.tasks_stopped
        self.writer.write(line)
