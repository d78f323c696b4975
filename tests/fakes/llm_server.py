"""A scripted, OpenAI-compatible HTTP server that streams real SSE (stdlib only).

The server answers ``POST /v1/chat/completions`` (and ``/chat/completions``) from a
queue of *script steps*: each request consumes the next step.  When the queue is empty
the server streams the plain text ``(no more scripted responses)`` so a test fails
visibly instead of hanging, and counts the request as an overrun; ``check_script()``
(called by the ``server`` fixtures at teardown) fails on an overrun or an unused step
(``allow_unused = True`` opts out of the latter, for a test that leaves steps on purpose).
``GET /v1/models`` (and ``/models``) lists one model.

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

Steps (``text``, ``tool_calls``, ``cut``, ``error``, ``rate_limited``, ``context_length_exceeded``,
``raw``, ``hang``; ``filler_text`` for long benchmark text) are built and documented in
``tests/fakes/llm_script.py``; every public name there is re-exported here, so import from here.

CLI (for tmux tests and benchmarks)::

    python -m tests.fakes.llm_server --port 0 --script script.json [--repeat] [--model NAME]

prints ``PORT=<n>`` as the first stdout line (flushed), then serves until killed
(SIGTERM/SIGINT).  ``--script -`` reads stdin.  ``--repeat`` replays the script forever.
The script file is a JSON list of steps (or ``{"steps": [...]}``); every key except
``type`` is a keyword of the matching constructor in ``llm_script``::

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
      {"type": "hang", "seconds": 30, "text": "thinking"},
      {"type": "hang", "seconds": 300, "keepalive": 1, "role": false}
    ]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Re-exported: tests (and the app's tests) import every step name from this module.
from tests.fakes.llm_script import (  # noqa: F401
    DEFAULT_MODEL,
    NO_MORE_RESPONSES,
    CutMode,
    Error,
    Hang,
    Raw,
    Step,
    Text,
    ToolCall,
    ToolCalls,
    _Plan,
    context_length_exceeded,
    cut,
    error,
    filler_text,
    hang,
    rate_limited,
    raw,
    step_from_json,
    steps_from_json,
    text,
    tool_calls,
)

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


# --------------------------------------------------------------------------- HTTP


class _Abort(Exception):
    """The client went away or the server is closing; stop writing."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    # -- plumbing ----------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

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
            extra = self.server.owner.extra_get
            if path in extra:  # e.g. llama.cpp's `/props`, a vLLM-style `/v1/models`
                self._send_json(200, extra[path])
            elif path in ("/v1/models", "/models"):
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
                self.server.owner.waits.append(("pace", round(i * step.delay, 6)))
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
            if step.role:
                self._send_event(plan.chunk({"role": "assistant", "content": "", "refusal": None}, **extra))
            if step.text:
                self._send_event(plan.chunk({"content": step.text}, **extra))
        deadline = time.monotonic() + step.seconds
        keepalive = step.keepalive if stream and step.keepalive else None
        next_ping = time.monotonic() + keepalive if keepalive else None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._sleep(min(0.05, remaining))
            if self._client_gone():
                raise _Abort
            if next_ping is not None and time.monotonic() >= next_ping:
                self._send_chunk(b": ping\n\n")  # an SSE comment: keeps the connection busy, no event
                next_ping += keepalive
        self.server.owner.waits.append(("hang", step.seconds))
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
    owner: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if self.owner.verbose:
            super().handle_error(request, client_address)


class FakeLLMServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (see module docstring).

    ``FakeLLMServer(script=(), *, port=0, host="127.0.0.1", model="fake-model",
    repeat=False, verbose=False, extra_get=None)``; the server starts in the constructor.
    ``extra_get={"/props": {...}}`` answers more GET routes with fixed JSON (a server's
    window for agent/llm/models.py::probe_window).
    """

    # The request handler. A subclass speaking another wire format (tests/fakes/anthropic_server.py)
    # names its own and shares the script queue, request capture and lifecycle of this class.
    handler_class: type[BaseHTTPRequestHandler] = _Handler

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        model: str = DEFAULT_MODEL,
        repeat: bool = False,
        verbose: bool = False,
        extra_get: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        # GET path (no query, no trailing slash) → JSON answered with 200, before the built-in routes.
        self.extra_get: dict[str, Any] = dict(extra_get or {})
        self.verbose = verbose
        self.repeat = repeat
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._script: list[Step] = list(script)
        self._queue: list[Step] = list(self._script)
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._overruns: list[int] = []  # 1-based numbers of the requests that found no step left
        # A test that leaves scripted steps unused on purpose sets this (with a comment why);
        # `check_script` then only fails on overruns.
        self.allow_unused = False
        self._forever: Step | Callable[[dict[str, Any]], Step] | None = None
        self._conns: set[socket.socket] = set()
        self.connections_opened = 0  # TCP connections accepted so far (a pooled client reuses one)
        self._active = 0
        self._closed_evt = threading.Event()
        # The scripted waits the server kept, in order: ("pace", offset of an event from the
        # stream's start) and ("hang", seconds held). Tests read the schedule, not a clock.
        self.waits: list[tuple[str, float]] = []
        self._httpd = _HTTPServer((host, port), self.handler_class)
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
    def overruns(self) -> int:
        """Requests that found the script empty (answered with ``NO_MORE_RESPONSES``)."""
        with self._lock:
            return len(self._overruns)

    def check_script(self) -> None:
        """AssertionError unless the script was used exactly: no request found it empty, and
        every step was requested (unless ``allow_unused``; a ``repeat`` script never ends).
        The ``server`` fixtures call this at teardown, so a script that does not match what
        the test made the code send fails the test that owns it."""
        with self._lock:
            overruns, unused = list(self._overruns), list(self._queue)
        problems = []
        if overruns:
            problems.append(f"request(s) {overruns} found no scripted step left (answered {NO_MORE_RESPONSES!r})")
        if unused and not self.allow_unused and not self.repeat:
            names = ", ".join(getattr(step, "__name__", type(step).__name__) for step in unused)
            problems.append(f"{len(unused)} scripted step(s) were never requested: {names}")
        if problems:
            raise AssertionError("fake LLM script mismatch: " + "; ".join(problems))

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

    def add(self, *steps: Step | Callable[[dict[str, Any]], Step]) -> FakeLLMServer:
        """Queue steps; a callable step gets the request it answers and returns the step."""
        with self._lock:
            self._queue.extend(steps)
            if self.repeat:
                self._script.extend(steps)
        return self

    def add_forever(self, step: Step | Callable[[dict[str, Any]], Step]) -> FakeLLMServer:
        """Answer every request after the queued steps with ``step`` (usually a callable that
        answers from the request): for a test whose number of requests is decided by the code
        under test (e.g. "run turns until a condense happens"). Such a script never overruns
        and leaves nothing unused; the test asserts on the requests it got."""
        with self._lock:
            self._forever = step
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
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=2)

    def __enter__(self) -> FakeLLMServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> FakeLLMServer:
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
            if self._queue:
                step: Step = self._queue.pop(0)
            elif self._forever is not None:
                step = self._forever
            else:
                self._overruns.append(seq)
                step = Text(NO_MORE_RESPONSES, chunk_size=64)
            self._cond.notify_all()
        if callable(step):  # a step that answers what it was sent, as a model would
            step = step(request)
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
            self.connections_opened += 1

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

    server = FakeLLMServer(
        steps, port=args.port, host=args.host, model=args.model, repeat=args.repeat, verbose=args.verbose
    )
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
