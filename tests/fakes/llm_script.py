"""Script steps for ``tests.fakes.llm_server`` and the OpenAI payloads each one becomes.

A *script* is the queue of steps a ``FakeLLMServer`` answers from, one per request.  This
module is *what* to send (steps, their constructors and JSON form, and ``_Plan``, which renders
a step as ``chat.completion.chunk`` events or a ``chat.completion`` body); ``llm_server`` is
*how* (HTTP) and re-exports every public name here, so tests import from ``llm_server``.

Step constructors (all accept ``delay`` = seconds slept between SSE events and
``initial_delay`` = seconds before the first event, unless noted):

* ``text(text, chunk_size=5, delay=0.0, cut_after=None, cut_mode="abort",
  prompt_tokens=None, completion_tokens=None, finish_reason="stop", usage_always=False,
  initial_delay=0.0)``
* ``tool_calls(calls, text=None, chunk_size=5, args_chunk_size=8, delay=0.0, cut_after=None,
  cut_mode="abort", prompt_tokens=None, completion_tokens=None, usage_always=False,
  initial_delay=0.0)`` — ``calls`` is a list of ``(id, name, arguments)`` tuples (or
  ``ToolCall``/dicts); ``arguments`` is a JSON string or a dict (dumped for you).
* ``cut(after_chunks, text="", tool_calls=None, chunk_size=5, delay=0.0, mode="abort")`` —
  stream ``after_chunks`` SSE events, then drop the connection.  ``mode="abort"`` closes
  the socket mid chunked body (what a network drop looks like: the client sees an
  incomplete chunked read); ``mode="eof"`` ends the HTTP body cleanly but without the
  finish chunk and without ``[DONE]``.
* ``error(status, body=None, headers=None, message=None, code=None, type=None)`` — HTTP
  error with an OpenAI-style JSON body (a default body per status; ``body`` may be a dict
  or a raw string).  Shortcuts: ``rate_limited(retry_after=None)``,
  ``context_length_exceeded()``.
* ``raw(lines, delay=0.0, status=200, content_type="text/event-stream", end="clean")`` — write
  each line followed by ``\\n`` (include ``""`` for the blank line that ends an SSE event);
  ``end="abort"`` drops the connection afterwards instead of ending the body cleanly.
* ``filler_text(n_words)`` builds long, non-repeating text for benchmarks (litellm aborts a
  stream after 100 identical consecutive deltas, so never stream ``"x" * n``).
* ``hang(seconds, text="", then="finish")`` — stream the role delta (and ``text`` if given),
  then sleep up to ``seconds`` (waking early when the server closes or the client goes
  away), then ``then="finish"`` completes normally, ``then="abort"`` drops the connection.
  ``keepalive=S`` sends an SSE comment line ``: ping`` every S seconds meanwhile (what
  providers and proxies send to keep a connection open; a client's SSE parser drops it);
  ``role=False`` leaves out the role delta, so the body holds nothing but those comments.

JSON form (``step_from_json``; the CLI's ``--script``, example in ``llm_server``): ``{"type":
NAME, **kwargs}``, NAME a constructor above; a script is a list or ``{"steps": [...]}``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Text",
    "ToolCall",
    "ToolCalls",
    "Error",
    "Raw",
    "Hang",
    "Step",
    "text",
    "tool_calls",
    "cut",
    "error",
    "rate_limited",
    "context_length_exceeded",
    "raw",
    "hang",
    "step_from_json",
    "steps_from_json",
    "NO_MORE_RESPONSES",
    "DEFAULT_MODEL",
    "filler_text",
]

NO_MORE_RESPONSES = "(no more scripted responses)"
DEFAULT_MODEL = "fake-model"

CutMode = Literal["abort", "eof"]


# --------------------------------------------------------------------------- steps


@dataclass
class Text:
    """Stream ``text`` in ``chunk_size``-character content deltas."""

    text: str
    chunk_size: int = 5
    delay: float = 0.0
    cut_after: int | None = None
    cut_mode: CutMode = "abort"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    usage_always: bool = False
    initial_delay: float = 0.0
    # Reasoning streamed first as `reasoning_content` deltas (DeepSeek, and OpenAI-compatible
    # servers of reasoning models), counted in usage's completion_tokens_details.
    reasoning: str | None = None
    reasoning_tokens: int | None = None


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str = "{}"


@dataclass
class ToolCalls:
    """Stream optional text, then tool calls the way OpenAI does."""

    calls: list[ToolCall]
    text: str | None = None
    chunk_size: int = 5
    args_chunk_size: int = 8
    delay: float = 0.0
    cut_after: int | None = None
    cut_mode: CutMode = "abort"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "tool_calls"
    usage_always: bool = False
    initial_delay: float = 0.0


@dataclass
class Error:
    """An HTTP error response with an OpenAI-style JSON body."""

    status: int
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    initial_delay: float = 0.0


@dataclass
class Raw:
    """Raw SSE lines, each written followed by ``\\n``."""

    lines: list[str]
    delay: float = 0.0
    status: int = 200
    content_type: str = "text/event-stream"
    end: Literal["clean", "abort"] = "clean"
    initial_delay: float = 0.0


@dataclass
class Hang:
    """Stream the role delta (and ``text``), then sleep up to ``seconds``."""

    seconds: float
    text: str = ""
    then: Literal["finish", "abort"] = "finish"
    initial_delay: float = 0.0
    keepalive: float | None = None  # send an SSE comment (": ping") this often while hanging
    role: bool = True  # False: no role delta either (headers, then only what `keepalive` sends)


Step = Text | ToolCalls | Error | Raw | Hang


def text(
    text: str,
    chunk_size: int = 5,
    delay: float = 0.0,
    *,
    cut_after: int | None = None,
    cut_mode: CutMode = "abort",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    finish_reason: str = "stop",
    usage_always: bool = False,
    initial_delay: float = 0.0,
    reasoning: str | None = None,
    reasoning_tokens: int | None = None,
) -> Text:
    return Text(
        text=text,
        reasoning=reasoning,
        reasoning_tokens=reasoning_tokens,
        chunk_size=chunk_size,
        delay=delay,
        cut_after=cut_after,
        cut_mode=cut_mode,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        finish_reason=finish_reason,
        usage_always=usage_always,
        initial_delay=initial_delay,
    )


def _to_tool_call(call: Any) -> ToolCall:
    if isinstance(call, ToolCall):
        return call
    if isinstance(call, dict):
        cid, name, args = call["id"], call["name"], call.get("arguments", "{}")
    else:
        cid, name, args = call
    if not isinstance(args, str):
        args = json.dumps(args)
    return ToolCall(id=cid, name=name, arguments=args)


def tool_calls(
    calls: Iterable[Any],
    text: str | None = None,
    *,
    chunk_size: int = 5,
    args_chunk_size: int = 8,
    delay: float = 0.0,
    cut_after: int | None = None,
    cut_mode: CutMode = "abort",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    finish_reason: str = "tool_calls",
    usage_always: bool = False,
    initial_delay: float = 0.0,
) -> ToolCalls:
    return ToolCalls(
        calls=[_to_tool_call(c) for c in calls],
        text=text,
        chunk_size=chunk_size,
        args_chunk_size=args_chunk_size,
        delay=delay,
        cut_after=cut_after,
        cut_mode=cut_mode,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        finish_reason=finish_reason,
        usage_always=usage_always,
        initial_delay=initial_delay,
    )


def cut(
    after_chunks: int,
    text: str = "",
    *,
    tool_calls: Iterable[Any] | None = None,
    chunk_size: int = 5,
    args_chunk_size: int = 8,
    delay: float = 0.0,
    mode: CutMode = "abort",
) -> Text | ToolCalls:
    """Stream ``after_chunks`` SSE events (event 1 = role delta), then drop the connection."""
    if tool_calls is not None:
        return ToolCalls(
            calls=[_to_tool_call(c) for c in tool_calls],
            text=text or None,
            chunk_size=chunk_size,
            args_chunk_size=args_chunk_size,
            delay=delay,
            cut_after=after_chunks,
            cut_mode=mode,
        )
    return Text(text=text, chunk_size=chunk_size, delay=delay, cut_after=after_chunks, cut_mode=mode)


_DEFAULT_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request.", "invalid_request_error", None),
    401: (
        "Incorrect API key provided: sk-test. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
    ),
    403: ("You are not allowed to access this resource.", "permission_error", None),
    404: (
        "The model `fake-model` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    408: ("Request timed out.", "timeout", None),
    413: ("Request entity too large.", "invalid_request_error", None),
    422: ("Unprocessable entity.", "invalid_request_error", None),
    429: (
        "Rate limit reached for requests. Please try again in 1s.",
        "requests",
        "rate_limit_exceeded",
    ),
    500: (
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
    ),
    502: ("Bad gateway.", "server_error", None),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
    504: ("Gateway timeout.", "server_error", None),
    529: ("Overloaded.", "overloaded_error", None),
}


def error(
    status: int,
    body: dict[str, Any] | str | None = None,
    headers: dict[str, str] | None = None,
    *,
    message: str | None = None,
    code: str | None = None,
    type: str | None = None,
    initial_delay: float = 0.0,
) -> Error:
    if body is None:
        d_msg, d_type, d_code = _DEFAULT_ERRORS.get(status, (f"Error {status}.", "api_error", None))
        body = {
            "error": {
                "message": message if message is not None else d_msg,
                "type": type if type is not None else d_type,
                "param": None,
                "code": code if code is not None else d_code,
            }
        }
    return Error(status=status, body=body, headers=dict(headers or {}), initial_delay=initial_delay)


def rate_limited(retry_after: float | int | str | None = None, *, message: str | None = None) -> Error:
    """429 with an optional ``Retry-After`` header (seconds)."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return error(429, headers=headers, message=message)


def context_length_exceeded(max_tokens: int = 128000, got: int = 130000) -> Error:
    """The exact 400 OpenAI sends when the prompt is too long."""
    return error(
        400,
        message=(
            f"This model's maximum context length is {max_tokens} tokens. However, your messages "
            f"resulted in {got} tokens. Please reduce the length of the messages."
        ),
        type="invalid_request_error",
        code="context_length_exceeded",
    )


def raw(
    lines: Sequence[str] | str,
    delay: float = 0.0,
    *,
    status: int = 200,
    content_type: str = "text/event-stream",
    end: Literal["clean", "abort"] = "clean",
    initial_delay: float = 0.0,
) -> Raw:
    if isinstance(lines, str):
        lines = lines.split("\n")
    return Raw(
        lines=list(lines),
        delay=delay,
        status=status,
        content_type=content_type,
        end=end,
        initial_delay=initial_delay,
    )


def hang(
    seconds: float,
    text: str = "",
    *,
    then: Literal["finish", "abort"] = "finish",
    initial_delay: float = 0.0,
    keepalive: float | None = None,
    role: bool = True,
) -> Hang:
    return Hang(seconds=seconds, text=text, then=then, initial_delay=initial_delay, keepalive=keepalive, role=role)


_FILLER_WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "seven",
    "wizards",
    "quietly",
    "hex",
    "forty",
    "jugs",
    "of",
    "mead",
    "and",
    "cairns",
    "mark",
    "the",
    "winding",
    "trail",
    "past",
    "granite",
    "ridges",
    "where",
    "ravens",
    "circle",
    "above",
    "cold",
    "streams",
]


def filler_text(n_words: int) -> str:
    """Deterministic, non-repeating prose of ``n_words`` words (~1.3 tokens per word).

    litellm raises ``InternalServerError("The model is repeating the same chunk")`` (wrapped
    in ``MidStreamFallbackError``) after 100 identical consecutive content deltas longer than
    2 characters, so long benchmark streams must not be ``"x" * n``.
    """
    words = _FILLER_WORDS
    out = []
    for i in range(n_words):
        w = words[(i * 7 + i // len(words)) % len(words)]
        out.append(w + ("." if i % 13 == 12 else ""))
    return " ".join(out)


_CONSTRUCTORS: dict[str, Any] = {
    "text": text,
    "tool_calls": tool_calls,
    "cut": cut,
    "error": error,
    "rate_limited": rate_limited,
    "context_length_exceeded": context_length_exceeded,
    "raw": raw,
    "hang": hang,
}


def step_from_json(obj: dict[str, Any]) -> Step:
    """Build one step from its JSON form (``{"type": ..., **constructor kwargs}``)."""
    obj = dict(obj)
    kind = obj.pop("type", None)
    if kind not in _CONSTRUCTORS:
        raise ValueError(f"unknown step type {kind!r}; expected one of {sorted(_CONSTRUCTORS)}")
    return _CONSTRUCTORS[kind](**obj)


def steps_from_json(data: Any) -> list[Step]:
    if isinstance(data, dict) and "steps" in data:
        data = data["steps"]
    if not isinstance(data, list):
        raise ValueError("a script is a JSON list of steps (or {'steps': [...]})")
    return [step_from_json(s) for s in data]


# --------------------------------------------------------------------------- payloads


def _split(s: str, n: int) -> list[str]:
    n = max(1, int(n))
    return [s[i : i + n] for i in range(0, len(s), n)]


def _estimate_tokens(s: str) -> int:
    return max(1, math.ceil(len(s) / 4)) if s else 0


def _prompt_tokens(request: dict[str, Any]) -> int:
    try:
        return max(1, len(json.dumps(request.get("messages", []))) // 4)
    except (TypeError, ValueError):
        return 1


class _Plan:
    """The event payloads of one streamed (or non-streamed) completion."""

    def __init__(self, step: Text | ToolCalls | Hang, request: dict[str, Any], seq: int) -> None:
        self.request = request
        self.id = f"chatcmpl-fake{seq:06d}"
        self.created = int(time.time())
        self.model = str(request.get("model") or DEFAULT_MODEL)
        self.step = step

    def chunk(self, delta: dict[str, Any] | None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish_reason}],
        }
        obj.update(extra)
        return obj

    def usage(self, content: str, tool_args: str = "") -> dict[str, Any]:
        step = self.step
        pt = getattr(step, "prompt_tokens", None)
        ct = getattr(step, "completion_tokens", None)
        pt = _prompt_tokens(self.request) if pt is None else pt
        ct = _estimate_tokens(content + tool_args) if ct is None else ct
        out: dict[str, Any] = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
        reasoning_tokens = getattr(step, "reasoning_tokens", None)
        if reasoning_tokens is not None:
            out["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        return out

    def wants_usage(self) -> bool:
        opts = self.request.get("stream_options") or {}
        return bool(isinstance(opts, dict) and opts.get("include_usage")) or bool(
            getattr(self.step, "usage_always", False)
        )

    def stream_events(self) -> list[dict[str, Any]]:
        step = self.step
        include_usage = self.wants_usage()
        extra = {"usage": None} if include_usage else {}
        events = [self.chunk({"role": "assistant", "content": "", "refusal": None}, **extra)]
        content = ""
        args_all = ""
        if isinstance(step, Text) and step.reasoning:
            for piece in _split(step.reasoning, step.chunk_size):
                events.append(self.chunk({"reasoning_content": piece}, **extra))
        if isinstance(step, (Text, ToolCalls)):
            content = step.text or ""
            for piece in _split(content, step.chunk_size) if content else []:
                events.append(self.chunk({"content": piece}, **extra))
        if isinstance(step, ToolCalls):
            for index, call in enumerate(step.calls):
                args_all += call.arguments
                events.append(
                    self.chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": index,
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": ""},
                                }
                            ]
                        },
                        **extra,
                    )
                )
                for frag in _split(call.arguments, step.args_chunk_size) if call.arguments else []:
                    events.append(
                        self.chunk({"tool_calls": [{"index": index, "function": {"arguments": frag}}]}, **extra)
                    )
        finish = getattr(step, "finish_reason", "stop")
        events.append(self.chunk({}, finish, **extra))
        if include_usage:
            usage_chunk = self.chunk(None, None, usage=self.usage(content, args_all))
            usage_chunk["choices"] = []
            events.append(usage_chunk)
        return events

    def completion(self, content_override: str | None = None) -> dict[str, Any]:
        step = self.step
        content = content_override if content_override is not None else (getattr(step, "text", None) or "")
        message: dict[str, Any] = {"role": "assistant", "content": content or None, "refusal": None}
        args_all = ""
        finish = getattr(step, "finish_reason", "stop")
        if isinstance(step, ToolCalls):
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in step.calls
            ]
            args_all = "".join(c.arguments for c in step.calls)
        elif message["content"] is None:
            message["content"] = ""
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": self.usage(content, args_all),
        }
