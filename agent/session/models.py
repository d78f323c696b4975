"""The one message model used by the store, the context pipeline and the API (SPEC §3)."""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, Field

Role = Literal["system", "user", "assistant", "tool"]
Status = Literal["ok", "error", "interrupted"]
Kind = Literal["message", "summary", "note"]


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id() -> str:
    return str(uuid.uuid4())


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str = ""  # raw JSON text exactly as the model sent it

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments or "{}"},
        }


class Message(BaseModel):
    id: str = Field(default_factory=new_id)
    session_id: str = ""
    parent_id: str | None = None
    seq: int = 0
    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    created_at: int = Field(default_factory=now_ms)
    status: Status = "ok"
    kind: Kind = "message"
    meta: dict[str, Any] = Field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        """OpenAI chat format; metadata stays behind."""
        out: dict[str, Any] = {"role": self.role}
        if self.role == "assistant":
            out["content"] = self.content or None
            if self.tool_calls:
                out["tool_calls"] = [tc.to_api() for tc in self.tool_calls]
            elif out["content"] is None:
                out["content"] = ""
            blocks = self.meta.get("thinking_blocks")
            if blocks:
                # Claude's signed thinking, kept byte for byte: the client sends it back only
                # to a Claude request that thinks (agent/llm/client.py `_thinking_for`).
                out["thinking_blocks"] = blocks
            searches = self.meta.get("server_blocks")
            if searches:  # Claude's server-side searches, as they came (agent/llm/server_search.py)
                out["server_blocks"] = searches
        elif self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            out["content"] = self.content or ""
        else:
            out["content"] = self.content or ""
        return out


class Session(BaseModel):
    id: str = Field(default_factory=new_id)
    title: str = ""
    cwd: str = ""
    created_at: int = Field(default_factory=now_ms)
    updated_at: int = Field(default_factory=now_ms)
    head_id: str | None = None
    model: str = ""
    # A fork's source, or the session a subagent worked for (then `agent` is set).
    parent_session_id: str | None = None
    agent: str | None = None  # a subagent's definition name (agent/subagents/); None: a user's session
    parent_call_id: str | None = None  # the parent's `subagent` tool call this session answered


class SessionSummary(BaseModel):
    """One row of the session picker and `cairn session list`."""

    session: Session
    first_prompt: str = ""
    message_count: int = 0


class FileChange(BaseModel):
    """One file change a tool made: content hashes before (None: the file did not exist) and after
    (None: the file was removed). The bytes live in the store's blob table."""

    id: int = 0
    session_id: str
    message_id: str
    path: str  # absolute
    before_hash: str | None
    after_hash: str | None
    created_at: int = Field(default_factory=now_ms)


NoticeKind = Literal["info", "warning", "error"]


class SessionNotice(BaseModel):
    """A line the user was shown during a turn: an error, a notice, what a hook did.

    Kept beside the messages, never among them (no request, export of the conversation or
    import reads it as one): a resumed session shows it again, dimmed, after `after_id` (the
    message it followed; None: before the first). `source` says what emitted it
    (`error`, `notice`, `hook`)."""

    id: int = 0
    session_id: str
    after_id: str | None = None
    created_at: int = Field(default_factory=now_ms)
    kind: NoticeKind = "info"
    source: str = "notice"
    text: str


ContextAction = Literal["condense", "truncate"]
ContextTrigger = Literal["auto", "manual", "overflow"]


class ContextEvent(BaseModel):
    """One budget event (seed 001 §9 metrics): a condense or a smart truncation of the request.

    `outcome`: a condense is "ok" or "failed" (the request then fell back to truncation, a
    separate event); a truncation is "ok" when it reached its target, else "partial".
    Sizes are whole-request tokens (system prompt, tools and messages) by our tokenizer.
    """

    id: int = 0
    session_id: str
    created_at: int = Field(default_factory=now_ms)
    action: ContextAction
    trigger: ContextTrigger
    outcome: Literal["ok", "failed", "partial"]
    tokens_before: int
    tokens_after: int
    duration_ms: int = 0
    summary_id: str | None = None
    error: str | None = None
    # Details by action: condense → model, cost, messages, instructions, still_over;
    # truncate → target, messages_deleted, calls_removed, results_folded, files_folded.
    detail: dict[str, Any] = Field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """ "压缩率（压缩后/压缩前）"."""
        return self.tokens_after / self.tokens_before if self.tokens_before else 1.0
