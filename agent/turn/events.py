"""Typed events the loop emits; the UI and headless mode render them, nothing else."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel

from agent.session.models import ContextEvent, ContextTrigger, Message, ToolCall


class UserMessage(BaseModel):
    type: Literal["user_message"] = "user_message"
    message: Message


class AssistantStarted(BaseModel):
    """A model response begins streaming into a new assistant message."""

    type: Literal["assistant_started"] = "assistant_started"
    message_id: str


class TextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    message_id: str
    text: str


class ThinkingDelta(BaseModel):
    """The model's reasoning as it streams, before (or between) its text and tool calls."""

    type: Literal["thinking_delta"] = "thinking_delta"
    message_id: str
    text: str


class AssistantFinished(BaseModel):
    """The assistant message is final (status ok, or interrupted with partial text)."""

    type: Literal["assistant_finished"] = "assistant_finished"
    message: Message


class ToolStarted(BaseModel):
    type: Literal["tool_started"] = "tool_started"
    call: ToolCall


class ToolFinished(BaseModel):
    """A tool result message was stored; `message.meta` may hold `diff` for edits."""

    type: Literal["tool_finished"] = "tool_finished"
    call: ToolCall
    message: Message


class ToolOutput(BaseModel):
    """Output a running tool produced (a command's stdout/stderr as it arrives), to show live."""

    type: Literal["tool_output"] = "tool_output"
    call_id: str
    text: str


class Retrying(BaseModel):
    """A retryable provider error; the loop sleeps `delay` seconds before attempt `attempt`."""

    type: Literal["retrying"] = "retrying"
    attempt: int
    max_attempts: int
    delay: float
    reason: str


class Usage(BaseModel):
    """Context size of the last request and running cost of the session."""

    type: Literal["usage"] = "usage"
    context_tokens: int
    context_window: int
    prompt_tokens_reported: int | None = None
    completion_tokens: int = 0
    # Of the reported prompt tokens, those read from the provider's prompt cache (None: no
    # answer yet for this request).
    cache_read_tokens: int | None = None
    session_cost: float = 0.0

    @property
    def cache_share(self) -> float | None:
        """The last request's cache hits as a share of its prompt, when the provider said."""
        if self.cache_read_tokens is None or not self.prompt_tokens_reported:
            return None
        return min(1.0, self.cache_read_tokens / self.prompt_tokens_reported)


class CondenseStarted(BaseModel):
    """The loop is summarising the conversation (a model call); the UI shows a progress line."""

    type: Literal["condense_started"] = "condense_started"
    trigger: ContextTrigger
    tokens: int  # the request's tokens before


class ContextManaged(BaseModel):
    """A condense or a truncation happened (or a condense failed): a marker in the chat.

    For a successful condense `summary` is the stored summary message (kind=summary) and the
    messages it replaced are `summary.meta["condensed"]["first_id"]`…`["last_id"]` of the path.
    """

    type: Literal["context_managed"] = "context_managed"
    event: ContextEvent
    summary: Message | None = None


class TurnError(BaseModel):
    """A readable message for the user; the turn ended without a final answer."""

    type: Literal["turn_error"] = "turn_error"
    message: str


class Notice(BaseModel):
    """Something the user should know about an answer that did arrive (e.g. it was cut off at
    the output limit): a line in the chat, a `Note:` on stderr in `-p`. The turn goes on."""

    type: Literal["notice"] = "notice"
    message: str
    kind: Literal["info", "warning"] = "warning"


class HookActed(BaseModel):
    """A hook did something the user would otherwise not see (agent/hooks/acted.py): blocked a
    tool call, changed its input, added context for the model, sent the model back to work.
    `message` is the whole line ("PreToolUse hook bash_guard.py blocked terminal-execute: …");
    what the model is told is unchanged."""

    type: Literal["hook_acted"] = "hook_acted"
    hook_event_name: str  # PreToolUse, UserPromptSubmit, …
    hook: str  # the command's short name
    action: Literal["blocked", "changed_input", "added_context", "went_on"]
    detail: str = ""
    message: str


class LimitReached(BaseModel):
    """A limit of an unattended run stopped it (agent/headless/limits.py): `--max-turns`,
    `--max-cost`, or a tool call outside `--allowed-tools` / inside `--disallowed-tools`.
    Every open tool call was answered; the turn then finishes with status "limit"."""

    type: Literal["limit_reached"] = "limit_reached"
    limit: Literal["max_turns", "max_cost", "tool_not_allowed", "tool_disallowed"]
    message: str
    exit_code: int
    tool_call_id: str | None = None  # the call that was refused, for a tool limit


class ModeChanged(BaseModel):
    """The permission mode changed (agent/tools/modes.py): the user switched it, or approved a
    plan with exit-plan-mode. The status bar shows it; ACP sends a `current_mode_update`."""

    type: Literal["mode_changed"] = "mode_changed"
    mode: str


class TaskStarted(BaseModel):
    """A background task started (terminal-execute with `background`, agent/tools/background_tasks.py)."""

    type: Literal["task_started"] = "task_started"
    task_id: str
    command: str
    pid: int


class TaskFinished(BaseModel):
    """A background task ended: it exited, or was stopped (`stopped_by`: model, user, session_end).
    Said between turns too; `message` is the whole line."""

    type: Literal["task_finished"] = "task_finished"
    task_id: str
    command: str
    exit_code: int | None
    stopped_by: Literal["model", "user", "session_end"] | None = None
    runtime_seconds: float
    message: str


class TurnFinished(BaseModel):
    type: Literal["turn_finished"] = "turn_finished"
    status: Literal["ok", "error", "interrupted", "limit"]


Event = Union[  # noqa: UP007 - a discriminated union of many members reads better one per line
    UserMessage,
    AssistantStarted,
    TextDelta,
    ThinkingDelta,
    AssistantFinished,
    ToolStarted,
    ToolFinished,
    ToolOutput,
    Retrying,
    Usage,
    CondenseStarted,
    ContextManaged,
    Notice,
    HookActed,
    TurnError,
    LimitReached,
    ModeChanged,
    TaskStarted,
    TaskFinished,
    TurnFinished,
]
