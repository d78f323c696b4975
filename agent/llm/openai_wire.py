"""OpenAI's chat completions on the wire: the request body and the stream's chunks, as the
fast path's `OpenAIWire` (agent/llm/wire.py: one object per wire format).

What litellm 1.106.2 sends for `openai/…` is mirrored where it matters: OpenAI's reasoning
models (o-series, gpt-5) take `max_completion_tokens` and only the default temperature; every
other model, and any OpenAI-compatible server, takes `max_tokens`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agent.llm.chunks import CallPiece, Chunk, UsagePiece
from agent.llm.fast import HttpWire
from agent.llm.http import StreamBroken
from agent.llm.sse import json_object, mapping
from agent.llm.wire import WireCall

# OpenAI's reasoning families (litellm's OpenAIOSeriesConfig and OpenAIGPT5Config).
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)
DONE = "[DONE]"


class OpenAIWire(HttpWire):
    def headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}", "content-type": "application/json"}

    def body(self, call: WireCall) -> bytes:
        """The messages go out as they are: encoded once for the request's copy when they
        are unchanged (`call.messages_json`), else here."""
        body = request_body(
            self.wire.model,
            call.tools,
            max_tokens=call.max_tokens,
            temperature=call.temperature,
            effort=call.effort.get("reasoning_effort"),
        )
        if call.messages_json is not None:
            return encode(body, call.messages_json())
        return encode(body, dumps(without_nulls(call.messages)))

    def reader(self) -> OpenAIReader:
        return OpenAIReader()


class OpenAIReader:
    """The stream's `data:` payloads in order: it ends at `[DONE]`, and was finished once a
    choice gave a finish reason."""

    def __init__(self) -> None:
        self.done = False
        self.finished = False

    def parse(self, event: str, data: str) -> Chunk | None:
        chunk = parse(data)
        if chunk is None:
            self.done = True
        elif chunk.finish_reason:
            self.finished = True
        return chunk


def reasoning_model(name: str) -> bool:
    return bool(_REASONING_MODEL.match(name))


def request_body(
    model: str,
    tools: list[dict[str, Any]],
    *,
    max_tokens: int | None,
    temperature: float | None,
    effort: str | None,
) -> dict[str, Any]:
    """The body without its messages: `encode` puts them in, encoded once per request."""
    body: dict[str, Any] = {
        "model": model,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        body["tools"] = tools
    reasoning = reasoning_model(model)
    if max_tokens is not None:
        body["max_completion_tokens" if reasoning else "max_tokens"] = max_tokens
    if temperature is not None and (not reasoning or temperature == 1):
        body["temperature"] = temperature
    if effort:
        body["reasoning_effort"] = effort
    return body


def without_nulls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Null fields left out, as the openai SDK sends them (an assistant's `content: None`
    beside its tool calls): some OpenAI-compatible servers refuse a null where a string goes."""
    return [m if None not in m.values() else {k: v for k, v in m.items() if v is not None} for m in messages]


def encode(body: dict[str, Any], messages_json: str) -> bytes:
    """The body as JSON bytes with `messages_json` put in as it is: the request's messages,
    already encoded once for the copy `/context` keeps (agent/llm/client.py
    `ChatRequest.messages_json`), are not encoded again."""
    return (dumps(body)[:-1] + ',"messages":' + messages_json + "}").encode()


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse(data: str) -> Chunk | None:
    """One `data:` payload as a Chunk; None for the end marker. Raises StreamBroken for
    data that is not JSON or an error the server sent inside the stream."""
    if data.strip() == DONE:
        return None
    payload = json_object(data)
    if payload.get("error"):
        error = payload["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise StreamBroken(f"the server sent an error: {message}")
    chunk = Chunk()
    usage = payload.get("usage")
    if isinstance(usage, dict):
        chunk.usage = _usage(usage)
    for choice in payload.get("choices") or ():
        if not isinstance(choice, dict):
            continue
        if choice.get("finish_reason"):
            chunk.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            continue
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str):
            chunk.reasoning += reasoning
        content = delta.get("content")
        if isinstance(content, str):
            chunk.text += content
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            function = mapping(call.get("function"))
            chunk.calls.append(
                CallPiece(
                    index=call.get("index"),
                    id=call.get("id"),
                    name=function.get("name"),
                    arguments=function.get("arguments") or "",
                )
            )
    return chunk


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(usage: dict[str, Any]) -> UsagePiece:
    prompt_details = mapping(usage.get("prompt_tokens_details"))
    completion_details = mapping(usage.get("completion_tokens_details"))
    # DeepSeek-style servers report cache hits beside the prompt count.
    read = _number(prompt_details.get("cached_tokens")) or _number(usage.get("prompt_cache_hit_tokens"))
    return UsagePiece(
        prompt=_number(usage.get("prompt_tokens")),
        completion=_number(usage.get("completion_tokens")),
        cache_read=read,
        cache_write=_number(prompt_details.get("cache_write_tokens")),
        reasoning=_number(completion_details.get("reasoning_tokens")),
    )
