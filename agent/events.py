"""Typed events the loop emits; the UI and headless mode render them, nothing else."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel

from agent.session.models import Message, ToolCall


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
    session_cost: float = 0.0


class TurnError(BaseModel):
    """A readable message for the user; the turn ended without a final answer."""

    type: Literal["turn_error"] = "turn_error"
    message: str


class TurnFinished(BaseModel):
    type: Literal["turn_finished"] = "turn_finished"
    status: Literal["ok", "error", "interrupted"]


Event = Union[
    UserMessage,
    AssistantStarted,
    TextDelta,
    AssistantFinished,
    ToolStarted,
    ToolFinished,
    Retrying,
    Usage,
    TurnError,
    TurnFinished,
]
