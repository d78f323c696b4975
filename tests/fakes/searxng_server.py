"""A fake SearXNG: `GET /search?q=…&format=json` answered as SearXNG's JSON API (stdlib only).

    with FakeSearxng([result("Title", "https://docs.python.org/3/", "snippet"), …]) as srv:
        srv.base_url        # `[web] search_url`
        srv.queries         # the `q` of each request, in order
        srv.params          # each request's query parameters

`mode`: "json" (the results), "html" (a page that is not JSON: `format=json` switched off),
"error" (HTTP 500), "hang" (never answers until closed: a backend that times out). A request
without `format=json` gets HTML, as SearXNG answers it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


def result(title: str, url: str, content: str = "") -> dict[str, Any]:
    return {"title": title, "url": url, "content": content, "engine": "fake", "score": 1.0}


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, *args: object) -> None:
        return

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        owner: FakeSearxng = self.server.owner
        parts = urlsplit(self.path)
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        with owner.lock:
            owner.params.append(params)
            owner.paths.append(parts.path)
        if owner.mode == "hang":
            owner.closing.wait()
            return
        if parts.path != "/search":
            self._send(404, b"not found", "text/plain")
        elif owner.mode == "error":
            self._send(500, b"Internal Server Error", "text/plain")
        elif owner.mode == "html" or params.get("format") != "json":
            self._send(200, b"<!doctype html><html><body>results</body></html>", "text/html")
        else:
            body = {"query": params.get("q", ""), "number_of_results": len(owner.results), "results": owner.results}
            self._send(200, json.dumps(body).encode(), "application/json")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class FakeSearxng:
    def __init__(self, results: list[dict[str, Any]] | None = None, *, mode: str = "json") -> None:
        self.results = list(results or [])
        self.mode = mode
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.params: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def queries(self) -> list[str]:
        with self.lock:
            return [p.get("q", "") for p in self.params]

    def close(self) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> FakeSearxng:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
