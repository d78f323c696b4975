"""What one streamed completion produced: its text, tool calls, usage and cost.

Its own module because both sides of a request hold it: agent/llm/client.py fills it as the
stream arrives, and a failure carries what had streamed by then as `LLMError.partial`
(agent/llm/errors.py), which the loop keeps as the interrupted message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.session.models import ToolCall


@dataclass
class StreamResult:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None  # as litellm normalises it: cache reads and writes included
    completion_tokens: int | None = None
    cache_read_tokens: int = 0  # of the prompt, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of the prompt, written to it (billed above the input price)
    cost: float = 0.0
    # Tool calls whose arguments were still streaming when the stream stopped.
    partial_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    thinking: str = ""  # the model's reasoning as it streamed (any provider)
    # Claude's thinking blocks, signed, as the provider requires them back (agent/llm/reasoning.py).
    thinking_blocks: list[dict[str, Any]] = field(default_factory=list)
    reasoning_tokens: int | None = None  # of completion_tokens, spent thinking
    # Claude's server-side searches: their blocks as they came, and how many were billed
    # (agent/llm/server_search.py).
    server_blocks: list[dict[str, Any]] = field(default_factory=list)
    web_search_requests: int = 0
