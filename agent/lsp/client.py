"""One language server process, spoken to over its stdio: requests with answers, notifications,
the diagnostics it publishes, and the few requests it may ask of cairn.

The server is untrusted: what it sends is read through framing.py's bounds, diagnostics are
kept only for documents cairn opened (and only so many per document), its own requests get
empty answers, and its stderr is not read at all. It runs in its own process group, killed
whole when the client closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.lsp.framing import READER_LIMIT, Closed, FramingError, encode_message, read_message
from agent.process.process_group import kill_group

# Diagnostics kept per document: a server reporting ten thousand is not read further.
MAX_DIAGNOSTICS_PER_DOCUMENT = 500
# How long a polite shutdown may take before the process group is killed.
SHUTDOWN_SECONDS = 1.0
# JSON-RPC's "method not found", for server requests cairn does not serve.
METHOD_NOT_FOUND = -32601


class ServerGone(Exception):
    """The server exited or broke the protocol; `reason` says how, in words."""


class RequestFailed(Exception):
    """The server answered a request with an error."""


@dataclass
class Published:
    """A document's last published diagnostics: the version the server named (if any) and
    `seq`, the client's count of publishes when it arrived (so a waiter can tell new from old)."""

    version: int | None
    items: list[dict[str, Any]]
    seq: int


class LspClient:
    """A started server: `start()`, `initialize()`, then documents and requests; `close()`."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None
        self.gone: str | None = None  # why it stopped, once it did
        self.tracked: set[str] = set()  # URIs whose diagnostics are kept (the documents cairn opened)
        self.published: dict[str, Published] = {}
        self.seq = 0
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    # -- the process ------------------------------------------------------------------------
    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            cwd=str(self.cwd),
            start_new_session=True,
            limit=READER_LIMIT,
        )
        self._reader = asyncio.create_task(self._read_loop())

    @property
    def alive(self) -> bool:
        return self.gone is None and self.proc is not None and self.proc.returncode is None

    async def initialize(self, root: Path) -> dict[str, Any]:
        """The handshake. `processId` is None: inside the sandbox's PID namespace cairn's pid
        means nothing, and a server watching it would exit at once."""
        uri = root.as_uri()
        result = await self.request(
            "initialize",
            {
                "processId": None,
                "clientInfo": {"name": "cairn"},
                "rootUri": uri,
                "rootPath": str(root),
                "workspaceFolders": [{"uri": uri, "name": root.name or str(root)}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "textDocument": {
                        "synchronization": {"dynamicRegistration": False, "didSave": False},
                        "publishDiagnostics": {"versionSupport": True, "relatedInformation": False},
                        "hover": {"contentFormat": ["plaintext", "markdown"]},
                        "definition": {"linkSupport": True},
                        "references": {},
                    },
                    "workspace": {"workspaceFolders": True, "configuration": True},
                },
            },
        )
        await self.notify("initialized", {})
        return result if isinstance(result, dict) else {}

    async def close(self) -> None:
        """Shutdown and exit if the server still listens (briefly), then its group is killed."""
        if self.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.request("shutdown", None), SHUTDOWN_SECONDS)
                await self.notify("exit", None)
        if self.proc is not None:
            kill_group(self.proc.pid)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), SHUTDOWN_SECONDS)
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        self._stopped("closed")

    # -- messages ---------------------------------------------------------------------------
    async def _send(self, message: dict[str, Any]) -> None:
        if not self.alive or self.proc is None or self.proc.stdin is None:
            raise ServerGone(self.gone or "not running")
        try:
            self.proc.stdin.write(encode_message(message))
            await self.proc.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            self._stopped(f"its input closed ({type(exc).__name__})")
            raise ServerGone(self.gone or "its input closed") from exc

    async def notify(self, method: str, params: Any) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    async def request(self, method: str, params: Any) -> Any:
        """The answer's result. Raises ServerGone, RequestFailed; the caller bounds the wait."""
        ident = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
            return await future
        finally:
            self._pending.pop(ident, None)

    async def wait_published(self, uri: str, *, version: int, after_seq: int) -> list[dict[str, Any]]:
        """The diagnostics of `uri` as of `version`: a publish naming that version, or, from a
        server that names none, the first publish after `after_seq`. Raises ServerGone."""
        while True:
            found = self.published.get(uri)
            if found is not None and (found.version == version or (found.version is None and found.seq > after_seq)):
                return found.items
            if self.gone is not None:
                raise ServerGone(self.gone)
            changed = self._changed
            await changed.wait()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _stopped(self, reason: str) -> None:
        if self.gone is None:
            code = self.proc.returncode if self.proc is not None else None
            self.gone = f"{reason} (exit code {code})" if code is not None and reason != "closed" else reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ServerGone(self.gone))
        self._signal()

    async def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        reason = "it exited"
        try:
            while True:
                message = await read_message(self.proc.stdout)
                await self._dispatch(message)
        except Closed:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), SHUTDOWN_SECONDS)
        except FramingError as exc:
            reason = f"it broke the protocol: {exc}"
            kill_group(self.proc.pid)
        except ServerGone:
            pass
        self._stopped(reason)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        ident = message.get("id")
        if method is None:  # an answer
            future = self._pending.get(ident) if isinstance(ident, int) else None
            if future is not None and not future.done():
                error = message.get("error")
                if error is not None:
                    said = error.get("message") if isinstance(error, dict) else None
                    future.set_exception(RequestFailed(str(said)[:300] if said else "the server refused"))
                else:
                    future.set_result(message.get("result"))
        elif ident is not None:  # the server asks cairn something
            await self._answer(ident, str(method), message.get("params"))
        elif method == "textDocument/publishDiagnostics":
            self._keep_diagnostics(message.get("params"))

    async def _answer(self, ident: Any, method: str, params: Any) -> None:
        """Empty answers to what servers commonly ask (their settings: none), an error otherwise."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        if method == "workspace/configuration":
            items = params.get("items") if isinstance(params, dict) else None
            reply["result"] = [None] * min(len(items), 100) if isinstance(items, list) else []
        elif method == "workspace/workspaceFolders":
            reply["result"] = [{"uri": self.cwd.as_uri(), "name": self.cwd.name}]
        elif method in (
            "window/workDoneProgress/create",
            "client/registerCapability",
            "client/unregisterCapability",
            "window/showMessageRequest",
            "workspace/diagnostic/refresh",
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
        ):
            reply["result"] = None
        else:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": "not supported by cairn"}
        await self._send(reply)

    def _keep_diagnostics(self, params: Any) -> None:
        if not isinstance(params, dict):
            return
        uri = params.get("uri")
        items = params.get("diagnostics")
        if not isinstance(uri, str) or uri not in self.tracked or not isinstance(items, list):
            return
        version = params.get("version")
        self.seq += 1
        kept = [item for item in items[:MAX_DIAGNOSTICS_PER_DOCUMENT] if isinstance(item, dict)]
        self.published[uri] = Published(version if isinstance(version, int) else None, kept, self.seq)
        self._signal()
