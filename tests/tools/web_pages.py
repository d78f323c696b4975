"""A loopback HTTP server with the pages the web-fetch tests need (a real socket, real HTTP)."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARTICLE = b"""<!doctype html><html><head><title>The Title</title><style>body{color:red}</style>
<script>var tracking = "SCRIPT_TEXT";</script></head><body><nav><a href="/">Home</a></nav>
<h1>Heading</h1><p>Some <b>bold</b> text and a <a href="https://example.org/doc">link</a>.</p>
<pre><code>print("hi")</code></pre><ul><li>one</li><li>two</li></ul>
<form><input value="FORM_TEXT"></form></body></html>"""


class Pages(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    release: threading.Event  # set by the fixture; /hang waits on it
    other_port: int = 0  # a second server, for cross-host redirects
    requests: list[str]

    def log_message(self, *args):  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8", **headers) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.requests.append(self.path)
        path = self.path
        if path == "/article":
            self._send(200, ARTICLE)
        elif path == "/latin1":
            self._send(
                200, "<html><body><p>caf\xe9</p></body></html>".encode("latin-1"), "text/html; charset=iso-8859-1"
            )
        elif path == "/plain":
            self._send(200, b'{"ok": true}', "application/json")
        elif path == "/redirect":
            self._send(302, b"", Location="/article")
        elif path == "/redirect-loop":
            self._send(302, b"", Location="/redirect-loop")
        elif path == "/redirect-other-host":
            self._send(302, b"", Location=f"http://localhost:{self.other_port}/article")
        elif path == "/redirect-file":
            self._send(302, b"", Location="file:///etc/passwd")
        elif path == "/big":
            self._send(200, b"<html><body>" + b"<p>word word word</p>" * 200_000 + b"</body></html>")
        elif path == "/long-text":
            self._send(200, ("line\n" * 50_000).encode(), "text/plain")
        elif path == "/gzip-bomb":
            self._send(200, gzip.compress(b"a" * 50_000_000), "text/plain", Content_Encoding="gzip")
        elif path == "/image":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png")
        elif path == "/missing":
            self._send(404, b"<html><body><p>No such page</p></body></html>")
        elif path == "/hang":
            self.release.wait(120)
            self._send(200, b"late")
        else:
            self._send(404, b"not here", "text/plain")


class PageServer:
    def __init__(self, other_port: int = 0) -> None:
        self.release = threading.Event()
        self.requests: list[str] = []
        handler = type(
            "Handler", (Pages,), {"release": self.release, "other_port": other_port, "requests": self.requests}
        )
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
