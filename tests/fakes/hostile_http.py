"""Local HTTP servers that misbehave on purpose, for the wire's defences (stdlib only).

- ``Recorder``: writes down every request it gets (method, path, headers, body) and answers
  500; ``got`` is set at the first. The "other host" a redirect points at.
- ``Redirector(location)``: answers every request with a redirect (307 unless told) to
  ``location`` + the request's path, and writes the request down like a Recorder.
- ``Endless(head, unit)``: answers 200 with ``head``, then ``unit`` again and again (chunked)
  until the client closes the connection, or ``limit`` bytes went out (then ``hit_limit``).
  ``sent`` counts the body bytes written; ``stopped`` is set when it stops writing. A server
  that never ends a line, an event, a tool call or a body.

Each runs in a daemon thread on 127.0.0.1 and a free port; use as a context manager.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server:
    def __init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def do_GET(self) -> None:  # noqa: N802 - stdlib naming
                owner._handle(self, b"")

            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                length = int(self.headers.get("Content-Length") or 0)
                owner._handle(self, self.rfile.read(length) if length else b"")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self.requests: list[dict[str, Any]] = []
        self.got = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _record(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        self.requests.append(
            {
                "method": handler.command,
                "path": handler.path,
                "headers": {k.lower(): v for k, v in handler.headers.items()},
                "body": body,
            }
        )
        self.got.set()

    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        raise NotImplementedError

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _reply(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes = b"") -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class Recorder(_Server):
    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        self._record(handler, body)
        _reply(handler, 500, {"Content-Type": "application/json"}, b'{"error": {"message": "recorded"}}')


class Redirector(_Server):
    def __init__(self, location: str, status: int = 307) -> None:
        super().__init__()
        self.location = location.rstrip("/")
        self.status = status

    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        self._record(handler, body)
        _reply(handler, self.status, {"Location": self.location + handler.path})


class Endless(_Server):
    def __init__(
        self,
        unit: bytes | Callable[[int], bytes],
        *,
        head: bytes = b"",
        content_type: str = "text/event-stream",
        limit: int = 512 * 1024 * 1024,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.head = head
        self.unit = unit
        self.content_type = content_type
        self.limit = limit
        self.extra_headers = extra_headers or {}
        self.sent = 0
        self.hit_limit = False
        self.stopped = threading.Event()

    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        self._record(handler, body)
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        handler.send_header("Transfer-Encoding", "chunked")
        for name, value in self.extra_headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.close_connection = True
        try:
            self._write(handler, self.head)
            n = 0
            while self.sent < self.limit:
                self._write(handler, self.unit(n) if callable(self.unit) else self.unit)
                n += 1
            self.hit_limit = True
        except OSError:  # the client closed the connection: it stopped reading
            pass
        finally:
            self.stopped.set()
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)

    def _write(self, handler: BaseHTTPRequestHandler, data: bytes) -> None:
        if data:
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()
            self.sent += len(data)
