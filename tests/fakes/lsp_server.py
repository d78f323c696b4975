"""A tiny language server speaking the real protocol (Content-Length framed JSON-RPC on stdio),
for the cases a real server does not show on demand. Standard library only.

    python tests/fakes/lsp_server.py MODE [--log FILE]

MODE:
- `publish`: answers initialize; on every didOpen/didChange publishes, with the document's
  version, one error per line containing `BAD` ("BAD on line N" is not used: the message is
  `found BAD<suffix>`, the word that follows, so the same word on another line is the same error);
- `hang-diagnostics`: answers initialize, then never publishes (blocks reading for ever);
- `hang-initialize`: never answers anything;
- `crash-on-change`: as `publish` for didOpen, exits with code 3 on didChange;
- `probe`: on didOpen publishes what it could do from where it runs: write in its working
  folder, read $PROBE_SECRET_FILE, see $CAIRN_FAKE_TOKEN, connect to $PROBE_PORT on loopback.
`--log FILE`: append "started <pid>" to FILE at start (for counting starts, unsandboxed runs).
"""

from __future__ import annotations

import json
import os
import socket
import sys


def read() -> dict | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    assert length is not None
    return json.loads(sys.stdin.buffer.read(length))


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def bad_lines(uri: str, version: int, text: str) -> dict:
    diagnostics = []
    for number, line in enumerate(text.splitlines()):
        at = line.find("BAD")
        if at != -1:
            word = line[at:].split()[0]
            diagnostics.append(
                {
                    "range": {"start": {"line": number, "character": at}, "end": {"line": number, "character": at + 3}},
                    "severity": 1,
                    "source": "fake",
                    "message": f"found {word}",
                }
            )
    return {"uri": uri, "version": version, "diagnostics": diagnostics}


def probe(uri: str, version: int) -> dict:
    said = []
    try:
        with open("probe-write.txt", "w") as f:
            f.write("x")
        said.append("write: allowed")
    except OSError:
        said.append("write: denied")
    secret = os.environ.get("PROBE_SECRET_FILE", "")
    try:
        with open(secret) as f:
            said.append(f"secret: read {f.read()!r}")
    except OSError:
        said.append("secret: unreadable")
    said.append("token: visible" if os.environ.get("CAIRN_FAKE_TOKEN") else "token: hidden")
    try:
        with socket.create_connection(("127.0.0.1", int(os.environ.get("PROBE_PORT", "9"))), timeout=2):
            said.append("network: open")
    except OSError:
        said.append("network: blocked")
    items = [
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "severity": 1,
            "message": m,
        }
        for m in said
    ]
    return {"uri": uri, "version": version, "diagnostics": items}


def main() -> None:
    mode = sys.argv[1]
    if "--log" in sys.argv:
        with open(sys.argv[sys.argv.index("--log") + 1], "a") as log:
            log.write(f"started {os.getpid()}\n")
    while True:
        message = read()
        if message is None:
            return
        method = message.get("method")
        if mode == "hang-initialize":
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return
        elif mode == "hang-diagnostics":
            continue
        elif method == "textDocument/didOpen":
            doc = message["params"]["textDocument"]
            params = probe(doc["uri"], doc["version"]) if mode == "probe" else bad_lines(**_doc(doc))
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})
        elif method == "textDocument/didChange":
            if mode == "crash-on-change":
                sys.exit(3)
            doc = message["params"]["textDocument"]
            text = message["params"]["contentChanges"][-1]["text"]
            params = bad_lines(doc["uri"], doc["version"], text)
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})


def _doc(doc: dict) -> dict:
    return {"uri": doc["uri"], "version": doc["version"], "text": doc["text"]}


if __name__ == "__main__":
    main()
