"""Anthropic's Messages API on the wire: the request body and the stream's events, as the
fast path's `AnthropicWire` (agent/llm/wire.py: one object per wire format).

The body carries what litellm 1.106.2 sends for Claude: the converted messages
(agent/llm/anthropic_messages.py), `max_tokens` (required), extended thinking with the
budget of the effort (agent/llm/reasoning.py's THINKING_BUDGET, litellm's mapping), and no
temperature beside thinking (Anthropic refuses one). With `[web] native_search` it carries Anthropic's search
tool, and the stream's `server_tool_use` / `web_search_tool_result` blocks are read whole, beside
the searches billed (agent/llm/server_search.py).
"""

from __future__ import annotations

import json
from typing import Any

from agent.llm.anthropic_messages import convert
from agent.llm.chunks import CallPiece, Chunk, UsagePiece
from agent.llm.fast import HttpWire
from agent.llm.http import StreamBroken
from agent.llm.openai_wire import dumps
from agent.llm.reasoning import THINKING_BUDGET
from agent.llm.server_search import SERVER_BLOCK_TYPES, USE_BLOCK
from agent.llm.sse import json_object, mapping
from agent.llm.wire import WireCall

API_VERSION = "2023-06-01"
# Anthropic requires max_tokens; the budget's own default when the request has none.
DEFAULT_MAX_TOKENS = 4096
# Anthropic's stop reasons in OpenAI's words (what the loop and the store use).
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


class AnthropicWire(HttpWire):
    runs_server_search = True

    def headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key, "anthropic-version": API_VERSION, "content-type": "application/json"}

    def body(self, call: WireCall) -> bytes:
        body = request_body(
            self.wire.model,
            call.messages,
            call.tools,
            max_tokens=call.max_tokens,
            temperature=call.temperature,
            effort=call.effort.get("reasoning_effort"),
            server_tools=call.server_tools,
        )
        return dumps(body).encode()

    def reader(self) -> StreamState:
        return StreamState()


def request_body(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    *,
    max_tokens: int | None,
    temperature: float | None,
    effort: str | None,
    server_tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    system, turns, converted_tools = convert(messages, tools)
    converted_tools = [*(server_tools or []), *converted_tools]  # before cairn's: under their cache mark
    body: dict[str, Any] = {
        "model": model,
        "messages": turns,
        "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
        "stream": True,
    }
    if system:
        body["system"] = system
    if converted_tools:
        body["tools"] = converted_tools
    budget = THINKING_BUDGET.get(effort or "")
    if budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif temperature is not None:
        body["temperature"] = temperature
    return body


class StreamState:
    """Reads one response's events in order: which block each index is, the usage so far,
    and whether the message ended (`message_stop`) — a stream without it was cut."""

    def __init__(self) -> None:
        self.kinds: dict[int, str] = {}
        self.calls: dict[int, int] = {}  # block index → tool call index
        self.server: dict[int, dict[str, Any]] = {}  # block index → a server block being read
        self.server_input: dict[int, str] = {}  # block index → its input's JSON so far
        self.usage = UsagePiece()
        self.stopped = False

    @property
    def done(self) -> bool:
        return self.stopped

    @property
    def finished(self) -> bool:
        return self.stopped

    def parse(self, event: str, data: str) -> Chunk | None:
        if event == "ping":
            return None
        payload = json_object(data)
        kind = payload.get("type") or event
        if kind == "error":
            error = mapping(payload.get("error"))
            raise StreamBroken(f"the server sent an error: {error.get('message') or error.get('type') or data[:200]}")
        if kind == "message_start":
            return self._usage(mapping(payload.get("message")).get("usage"))
        if kind == "content_block_start":
            return self._start(payload.get("index"), mapping(payload.get("content_block")))
        if kind == "content_block_delta":
            return self._delta(payload.get("index"), mapping(payload.get("delta")))
        if kind == "message_delta":
            chunk = self._usage(payload.get("usage")) or Chunk()
            reason = mapping(payload.get("delta")).get("stop_reason")
            if reason:
                chunk.finish_reason = FINISH_REASONS.get(reason, "stop")
            return chunk
        if kind == "content_block_stop":
            return self._stop(payload.get("index"))
        if kind == "message_stop":
            self.stopped = True
        return None

    def _start(self, index: Any, block: dict[str, Any]) -> Chunk | None:
        kind = str(block.get("type") or "")
        if not isinstance(index, int):
            return None
        self.kinds[index] = kind
        if kind == "tool_use":
            self.calls[index] = len(self.calls)
            return Chunk(calls=[CallPiece(index=self.calls[index], id=block.get("id"), name=block.get("name"))])
        if kind in SERVER_BLOCK_TYPES:  # whole at its stop: a search's query, then its results
            self.server[index] = dict(block)
            self.server_input[index] = ""
            return None
        if kind == "redacted_thinking":
            return Chunk(thinking_blocks=[{"type": "redacted_thinking", "data": block.get("data") or ""}])
        if kind == "text" and block.get("text"):
            return Chunk(text=block["text"])
        return None

    def _delta(self, index: Any, delta: dict[str, Any]) -> Chunk | None:
        kind = delta.get("type")
        if kind == "text_delta":
            return Chunk(text=delta.get("text") or "")
        if kind == "input_json_delta" and index in self.server_input:
            self.server_input[index] += delta.get("partial_json") or ""
            return None
        if kind == "input_json_delta":
            position = self.calls.get(index) if isinstance(index, int) else None
            return Chunk(calls=[CallPiece(index=position, arguments=delta.get("partial_json") or "")])
        if kind == "thinking_delta":
            text = delta.get("thinking") or ""
            return Chunk(reasoning=text, thinking_blocks=[{"type": "thinking", "thinking": text}])
        if kind == "signature_delta":
            return Chunk(thinking_blocks=[{"type": "thinking", "signature": delta.get("signature") or ""}])
        return None

    def _stop(self, index: Any) -> Chunk | None:
        block = self.server.pop(index, None) if isinstance(index, int) else None
        if block is None:
            return None
        streamed = self.server_input.pop(index, "")
        if block.get("type") == USE_BLOCK and streamed:
            try:
                block["input"] = json.loads(streamed)
            except ValueError:
                return None  # a query cut mid-way: not a block the API would take back
        return Chunk(server_blocks=[block])

    def _usage(self, usage: Any) -> Chunk | None:
        """Anthropic's `input_tokens` leaves out what was read from or written to the cache;
        the prompt's count adds them back (as litellm does), so every client reports alike."""
        if not isinstance(usage, dict):
            return None
        numbers = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
        if "input_tokens" in numbers:
            self.usage.cache_read = numbers.get("cache_read_input_tokens", self.usage.cache_read or 0)
            self.usage.cache_write = numbers.get("cache_creation_input_tokens", self.usage.cache_write or 0)
            self.usage.prompt = numbers["input_tokens"] + (self.usage.cache_read or 0) + (self.usage.cache_write or 0)
        if "output_tokens" in numbers:
            self.usage.completion = numbers["output_tokens"]
        server = usage.get("server_tool_use")
        searches = server.get("web_search_requests") if isinstance(server, dict) else None
        if isinstance(searches, int) and not isinstance(searches, bool):
            self.usage.web_searches = searches
        return Chunk(usage=UsagePiece(**{k: getattr(self.usage, k) for k in UsagePiece.__slots__}))
