"""A scripted, OpenAI-compatible HTTP server that streams real SSE (stdlib only).

The server answers ``POST /v1/chat/completions`` (and ``/chat/completions``) from a
queue of *script steps*: each request consumes the next step.  When the queue is empty
the server streams the plain text ``(no more scripted responses)`` so a test fails
visibly instead of hanging.  ``GET /v1/models`` (and ``/models``) lists one model.

Python use::

    from tests.fakes.llm_server import FakeLLMServer, text, tool_calls, error

    with FakeLLMServer([text("hello world"), tool_calls([("c1", "filesystem-read", '{"filePath": "a.py"}')])]) as srv:
        litellm.acompletion(model="openai/fake-model", api_base=srv.base_url, api_key="sk-test", ...)
        srv.requests      # list of received JSON bodies (snapshot copy, thread-safe)
        srv.add(text("more"))

It works from sync and async tests (``with`` or ``async with``) and from another
process: the server listens on ``127.0.0.1`` on a free port in a daemon thread.

Streaming wire format (what OpenAI sends, and what the openai SDK / litellm parse):
HTTP/1.1, ``Transfer-Encoding: chunked``, ``Content-Type: text/event-stream``, one
``data: {chat.completion.chunk}\\n\\n`` event per HTTP chunk, ``data: [DONE]`` at the
end.  Event 1 is always the role delta ``{"role": "assistant", "content": ""}``; then
content deltas; tool calls (first delta per call carries index/id/type/name and empty
arguments, later deltas carry only ``index`` + an ``arguments`` fragment); a chunk with
``finish_reason``; and, when the request asked for ``stream_options.include_usage``
(or the step sets ``usage_always=True``), a final chunk with ``choices: []`` and
``usage``.  A request with ``stream`` false/absent gets a plain ``chat.completion`` JSON.

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

CLI (for tmux tests and benchmarks)::

    python -m tests.fakes.llm_server --port 0 --script script.json [--repeat] [--model NAME]

prints ``PORT=<n>`` as the first stdout line (flushed), then serves until killed
(SIGTERM/SIGINT).  ``--script -`` reads stdin.  ``--repeat`` replays the script forever.
The script file is a JSON list of steps (or ``{"steps": [...]}``); every key except
``type`` is a keyword of the matching constructor above::

    [
      {"type": "text", "text": "hello world", "chunk_size": 5, "delay": 0},
      {"type": "tool_calls", "text": "Reading.", "calls": [
          {"id": "c1", "name": "filesystem-read", "arguments": "{\\"filePath\\": \\"a.py\\"}"},
          {"id": "c2", "name": "filesystem-read", "arguments": {"filePath": "b.py"}}]},
      {"type": "error", "status": 429, "headers": {"Retry-After": "1"}},
      {"type": "rate_limited", "retry_after": 1},
      {"type": "context_length_exceeded"},
      {"type": "cut", "after_chunks": 3, "text": "partial answer"},
      {"type": "raw", "lines": ["data: {not json", "", "data: [DONE]", ""]},
      {"type": "hang", "seconds": 30, "text": "thinking"}
    ]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import select
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Literal, Sequence, Union

__all__ = [
    "FakeLLMServer",
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


Step = Union[Text, ToolCalls, Error, Raw, Hang]


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
) -> Text:
    return Text(
        text=text,
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
    seconds: float, text: str = "", *, then: Literal["finish", "abort"] = "finish", initial_delay: float = 0.0
) -> Hang:
    return Hang(seconds=seconds, text=text, then=then, initial_delay=initial_delay)


_FILLER_WORDS = (
    "the quick brown fox jumps over a lazy dog while seven wizards quietly hex "
    "forty jugs of mead and cairns mark the winding trail past granite ridges where "
    "ravens circle above cold streams"
).split()


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
            "choices": [
                {"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        obj.update(extra)
        return obj

    def usage(self, content: str, tool_args: str = "") -> dict[str, int]:
        step = self.step
        pt = getattr(step, "prompt_tokens", None)
        ct = getattr(step, "completion_tokens", None)
        pt = _prompt_tokens(self.request) if pt is None else pt
        ct = _estimate_tokens(content + tool_args) if ct is None else ct
        return {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}

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


# --------------------------------------------------------------------------- HTTP


class _Abort(Exception):
    """The client went away or the server is closing; stop writing."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_HTTPServer"

    # -- plumbing ----------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.server.owner._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.owner._untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.owner.verbose:
            sys.stderr.write("fake-llm: " + (format % args) + "\n")

    def _write(self, data: bytes) -> None:
        if self.server.owner.closed:
            raise _Abort
        try:
            self.wfile.write(data)
        except OSError as exc:
            raise _Abort from exc

    def _sleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        if self.server.owner._closed_evt.wait(seconds):
            raise _Abort

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        body = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self._write(body)

    def _start_stream(self, status: int = 200, content_type: str = "text/event-stream") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", f"req-fake-{id(self):x}")
        self.end_headers()
        try:
            self.wfile.flush()
        except OSError as exc:
            raise _Abort from exc

    def _send_chunk(self, data: bytes) -> None:
        if data:
            self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _send_event(self, obj: Any) -> None:
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self._send_chunk(f"data: {payload}\n\n".encode())

    def _end_stream(self) -> None:
        self._write(b"0\r\n\r\n")

    def _abort(self) -> None:
        """Drop the connection mid-body (no terminating chunk)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if readable:
                return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True
        return False

    # -- routes ------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            if path in ("/v1/models", "/models"):
                model = self.server.owner.model
                self._send_json(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "cairn-tests"}],
                    },
                )
            elif path in ("", "/", "/health", "/v1"):
                self._send_json(200, {"status": "ok"})
            else:
                self._send_json(404, {"error": {"message": f"Unknown path {path}", "type": "invalid_request_error"}})
        except _Abort:
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        try:
            if path not in ("/v1/chat/completions", "/chat/completions"):
                self._send_json(404, {"error": {"message": f"Unknown path {path}", "type": "invalid_request_error"}})
                return
            try:
                request = json.loads(raw_body or b"{}")
            except ValueError:
                self._send_json(400, {"error": {"message": "Body is not JSON", "type": "invalid_request_error"}})
                return
            owner = self.server.owner
            step, seq = owner._record_and_pop(request, {k.lower(): v for k, v in self.headers.items()})
            owner._stream_started()
            try:
                self._serve(step, request, seq)
            finally:
                owner._stream_ended()
        except _Abort:
            self._abort()

    def _serve(self, step: Step, request: dict[str, Any], seq: int) -> None:
        stream = bool(request.get("stream"))
        self._sleep(getattr(step, "initial_delay", 0.0))
        if isinstance(step, Error):
            body = step.body if step.body is not None else ""
            self._send_json(step.status, body, step.headers)
            return
        if isinstance(step, Raw):
            self._start_stream(step.status, step.content_type)
            for i, line in enumerate(step.lines):
                if i:
                    self._sleep(step.delay)
                self._send_chunk((line + "\n").encode())
            if step.end == "abort":
                self._abort()
            else:
                self._end_stream()
            return
        plan = _Plan(step, request, seq)
        if isinstance(step, Hang):
            self._serve_hang(step, plan, stream)
            return
        assert isinstance(step, (Text, ToolCalls))
        if not stream:
            self._serve_non_stream(step, plan)
            return
        events = plan.stream_events()
        limit = step.cut_after
        self._start_stream()
        t0 = time.monotonic()
        for i, event in enumerate(events):
            if limit is not None and i >= limit:
                break
            if i and step.delay > 0:
                # Pace against an absolute schedule so the scripted rate holds
                # even when each write costs a little.
                self._sleep(t0 + i * step.delay - time.monotonic())
            self._send_event(event)
        if limit is not None:  # never reaches [DONE]
            if step.cut_mode == "eof":
                self._end_stream()
            else:
                self._abort()
            return
        self._send_event("[DONE]")
        self._end_stream()

    def _serve_non_stream(self, step: Text | ToolCalls, plan: _Plan) -> None:
        body = json.dumps(plan.completion()).encode()
        if step.cut_after is not None:
            # Promise the whole body, deliver a part, drop the connection.
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self._write(body[: max(0, min(len(body) - 1, step.cut_after * 16))])
            self._abort()
            return
        self._send_json(200, json.loads(body))

    def _serve_hang(self, step: Hang, plan: _Plan, stream: bool) -> None:
        if stream:
            extra = {"usage": None} if plan.wants_usage() else {}
            self._start_stream()
            self._send_event(plan.chunk({"role": "assistant", "content": "", "refusal": None}, **extra))
            if step.text:
                self._send_event(plan.chunk({"content": step.text}, **extra))
        deadline = time.monotonic() + step.seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._sleep(min(0.05, remaining))
            if self._client_gone():
                raise _Abort
        if step.then == "abort":
            raise _Abort
        if not stream:
            self._send_json(200, plan.completion(step.text))
            return
        extra = {"usage": None} if plan.wants_usage() else {}
        self._send_event(plan.chunk({}, "stop", **extra))
        if plan.wants_usage():
            usage_chunk = plan.chunk(None, None, usage=plan.usage(step.text))
            usage_chunk["choices"] = []
            self._send_event(usage_chunk)
        self._send_event("[DONE]")
        self._end_stream()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    owner: "FakeLLMServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        if self.owner.verbose:
            super().handle_error(request, client_address)


class FakeLLMServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (see module docstring).

    ``FakeLLMServer(script=(), *, port=0, host="127.0.0.1", model="fake-model",
    repeat=False, verbose=False)``; the server starts in the constructor.
    """

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        model: str = DEFAULT_MODEL,
        repeat: bool = False,
        verbose: bool = False,
    ) -> None:
        self.model = model
        self.verbose = verbose
        self.repeat = repeat
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._script: list[Step] = list(script)
        self._queue: list[Step] = list(self._script)
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._conns: set[socket.socket] = set()
        self._active = 0
        self._closed_evt = threading.Event()
        self._httpd = _HTTPServer((host, port), _Handler)
        self._httpd.owner = self
        self.host = host
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=f"fake-llm-{self.port}", daemon=True
        )
        self._thread.start()

    # -- public ------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of the JSON bodies received on the chat-completions route, in order."""
        with self._lock:
            return copy.deepcopy(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._lock:
            return copy.deepcopy(self._headers)

    @property
    def pending(self) -> int:
        """Scripted steps not consumed yet."""
        with self._lock:
            return len(self._queue)

    @property
    def active_streams(self) -> int:
        """Chat-completion responses being served right now (a hang counts until it ends)."""
        with self._lock:
            return self._active

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no response is being served (e.g. after a client cancelled a stream)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._active:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    @property
    def closed(self) -> bool:
        return self._closed_evt.is_set()

    def add(self, *steps: Step) -> "FakeLLMServer":
        with self._lock:
            self._queue.extend(steps)
            if self.repeat:
                self._script.extend(steps)
        return self

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Block until ``n`` requests were received; return them (TimeoutError otherwise)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._requests) < n:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"got {len(self._requests)} requests, wanted {n}")
                self._cond.wait(remaining)
            return copy.deepcopy(self._requests)

    def close(self) -> None:
        if self._closed_evt.is_set():
            return
        self._closed_evt.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=2)

    def __enter__(self) -> "FakeLLMServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "FakeLLMServer":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FakeLLMServer(base_url={self.base_url!r}, pending={self.pending})"

    # -- internal ----------------------------------------------------------------
    def _record_and_pop(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[Step, int]:
        with self._cond:
            self._requests.append(request)
            self._headers.append(headers)
            seq = len(self._requests)
            if not self._queue and self.repeat and self._script:
                self._queue.extend(self._script)
            step: Step = self._queue.pop(0) if self._queue else Text(NO_MORE_RESPONSES, chunk_size=64)
            self._cond.notify_all()
        return step, seq

    def _stream_started(self) -> None:
        with self._cond:
            self._active += 1
            self._cond.notify_all()

    def _stream_ended(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def _track(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.add(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)


# --------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.llm_server", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--script", default=None, help="JSON file with a list of steps ('-' = stdin)")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--repeat", action="store_true", help="replay the script forever")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    steps: list[Step] = []
    if args.script:
        if args.script == "-":
            data = json.load(sys.stdin)
        else:
            with open(args.script, encoding="utf-8") as fh:
                data = json.load(fh)
        steps = steps_from_json(data)

    server = FakeLLMServer(steps, port=args.port, host=args.host, model=args.model, repeat=args.repeat,
                           verbose=args.verbose)
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    print(f"PORT={server.port}", flush=True)
    print(f"BASE_URL={server.base_url}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
