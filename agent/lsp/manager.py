"""A session's language servers: started at the first edit of their language, kept, closed with
the session; what an edit introduced, within a bound; the `lsp` tool's questions.

An edit never waits longer than `[lsp] timeout_ms` for its diagnostics: the wait is cancelled
(a server's start-up goes on behind it, shielded, so the next edit finds it ready), and the
result says so. A server that exits, breaks the protocol, never finishes starting, or lets
`HUNG_AFTER_TIMEOUTS` edits in a row pass without a word is started again once; after that it
is given up for the session, said once. The manager is the runtime's (one per session), handed
to the tools through `ToolContext.lsp`: there is no module-level state.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from agent.lsp.client import LspClient, RequestFailed, ServerGone
from agent.lsp.diagnostics import parse, report
from agent.lsp.launch import NoSandbox, can_start, server_command
from agent.lsp.servers import ServerSpec, discover, language_id, server_for
from agent.settings.schema import LspSettings
from agent.tools.sandbox import Sandbox

# A server is started this often at most: the first time and one restart.
MAX_STARTS = 2
# Starting and the handshake: a server still silent after this is treated as stopped.
STARTUP_SECONDS = 30.0
# Edits in a row that got no diagnostics in time: the server is taken for hung and restarted.
HUNG_AFTER_TIMEOUTS = 3
# The `lsp` tool waits longer than an edit: the model asked, and a first start takes seconds.
QUERY_SECONDS = 20.0

Operation = Literal["definition", "references", "hover"]
METHODS: dict[str, str] = {
    "definition": "textDocument/definition",
    "references": "textDocument/references",
    "hover": "textDocument/hover",
}


class LspUnavailable(Exception):
    """No server can answer for this file (none found, given up, no sandbox, too slow)."""


class LanguageServerStatus(BaseModel):
    name: str
    state: Literal["running", "starting", "not started", "stopped", "failed", "not found"]
    detail: str = ""


@dataclass
class _Document:
    version: int
    text: str
    sent_seq: int  # the client's publish count when this version was sent


@dataclass
class _Server:
    spec: ServerSpec
    client: LspClient | None = None
    starting: asyncio.Future[None] | None = None
    starts: int = 0
    timeouts: int = 0  # edits in a row without diagnostics in time
    failure: str | None = None  # why it was given up for the session
    failure_told: bool = False
    docs: dict[str, _Document] = field(default_factory=dict)


class LspManager:
    def __init__(
        self,
        settings: LspSettings,
        workspace: Path,
        sandbox: Sandbox | None,
        *,
        which: Callable[[str], str | None] = shutil.which,
    ) -> None:
        self.settings = settings
        self.workspace = workspace.resolve()
        self.sandbox = sandbox
        self.specs = discover(settings, which) if settings.enabled else []
        self._servers = {spec.name: _Server(spec) for spec in self.specs if spec.found}

    @property
    def offered(self) -> bool:
        """Whether any server could serve a file: the `lsp` tool is offered only then."""
        return bool(self._servers) and can_start(self.sandbox, self.settings.unsandboxed)

    def server_for(self, path: Path) -> ServerSpec | None:
        return server_for(self.specs, path) if self.offered else None

    # -- diagnostics after an edit ----------------------------------------------------------
    async def after_edit(self, path: Path, display: str, before: str | None, after: str) -> str:
        """What the change from `before` (None: a new file) to `after` introduced in `path`, as
        lines for the edit's result; "" when nothing is worth saying. Never raises, never waits
        longer than the bound."""
        spec = self.server_for(path)
        if spec is None:
            return ""
        server = self._servers[spec.name]
        if server.failure is not None and server.failure_told:
            return ""
        try:
            return await asyncio.wait_for(
                self._diagnose(server, path, display, before, after), self.settings.timeout_ms / 1000
            )
        except TimeoutError:
            return await self._timed_out(server)
        except LspUnavailable as exc:
            server.failure_told = True
            return f"Diagnostics: {exc}"
        except ServerGone as exc:
            return self._stopped(server, str(exc))
        except RequestFailed as exc:
            return f"Diagnostics: {spec.name} failed: {exc}"

    async def _diagnose(self, server: _Server, path: Path, display: str, before: str | None, after: str) -> str:
        client = await self._client(server)
        uri = path.as_uri()
        client.tracked.add(uri)
        before_items: list[dict[str, Any]] = []
        if before is not None or uri in server.docs:
            doc = await self._sync(server, client, path, before or "")
            before_items = await client.wait_published(uri, version=doc.version, after_seq=doc.sent_seq)
        doc = await self._sync(server, client, path, after)
        after_items = await client.wait_published(uri, version=doc.version, after_seq=doc.sent_seq)
        server.timeouts = 0
        return report(server.spec.name, display, parse(before_items), parse(after_items), self.settings.max_diagnostics)

    async def _timed_out(self, server: _Server) -> str:
        ms = self.settings.timeout_ms
        if server.starting is not None and not server.starting.done():
            name = server.spec.name
            return f"Diagnostics: {name} is still starting (not ready within {ms} ms); the next edits get them."
        server.timeouts += 1
        if server.timeouts >= HUNG_AFTER_TIMEOUTS and server.client is not None:
            server.timeouts = 0
            await server.client.close()
            return self._stopped(server, f"no diagnostics within {ms} ms {HUNG_AFTER_TIMEOUTS} times in a row")
        return f"Diagnostics: {server.spec.name} gave none within {ms} ms."

    def _stopped(self, server: _Server, reason: str) -> str:
        name = server.spec.name
        if server.starts >= MAX_STARTS:
            server.failure = f"{name} stopped again ({reason}); no diagnostics from it for the rest of this session"
            server.failure_told = True
            return f"Diagnostics: {server.failure}."
        return f"Diagnostics: {name} stopped ({reason}); it is started again at the next edit."

    # -- the `lsp` tool -----------------------------------------------------------------
    async def query(self, operation: Operation, path: Path, text: str, line: int, character: int) -> Any:
        """The server's answer to `operation` at the 0-based `line` and UTF-16 `character` of
        `path` (whose current `text` is sent first). Raises LspUnavailable."""
        spec = self.server_for(path)
        if spec is None:
            raise LspUnavailable(f"no language server for {path.suffix or 'this kind of'} files here")
        server = self._servers[spec.name]
        try:
            return await asyncio.wait_for(self._ask(server, operation, path, text, line, character), QUERY_SECONDS)
        except TimeoutError:
            raise LspUnavailable(f"{spec.name} did not answer within {QUERY_SECONDS:.0f} s") from None
        except ServerGone as exc:
            raise LspUnavailable(self._stopped(server, str(exc)).removeprefix("Diagnostics: ")) from None
        except RequestFailed as exc:
            raise LspUnavailable(f"{spec.name}: {exc}") from None

    async def _ask(self, server: _Server, operation: Operation, path: Path, text: str, line: int, char: int) -> Any:
        client = await self._client(server)
        client.tracked.add(path.as_uri())
        await self._sync(server, client, path, text)
        params: dict[str, Any] = {
            "textDocument": {"uri": path.as_uri()},
            "position": {"line": line, "character": char},
        }
        if operation == "references":
            params["context"] = {"includeDeclaration": True}
        return await client.request(METHODS[operation], params)

    # -- documents and processes --------------------------------------------------------
    async def _sync(self, server: _Server, client: LspClient, path: Path, text: str) -> _Document:
        """The server holds `text` for `path`: opened, or changed (whole text) when it differs."""
        uri = path.as_uri()
        doc = server.docs.get(uri)
        if doc is not None and doc.text == text:
            return doc
        if doc is None:
            doc = _Document(version=1, text=text, sent_seq=client.seq)
            await client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": language_id(path), "version": 1, "text": text}},
            )
        else:
            doc = _Document(version=doc.version + 1, text=text, sent_seq=client.seq)
            await client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [{"text": text}]},
            )
        server.docs[uri] = doc
        return doc

    async def _client(self, server: _Server) -> LspClient:
        """The server's running client: started (or started again, once) when it is not."""
        if server.failure is not None:
            raise LspUnavailable(server.failure)
        starting = server.starting
        if starting is not None and starting.done():
            client = server.client
            if not starting.cancelled() and starting.exception() is None and client is not None and client.alive:
                return client
            starting = None
        if starting is None:
            if server.starts >= MAX_STARTS:
                reason = server.client.gone if server.client is not None else None
                raise ServerGone(reason or "it stopped")
            server.starts += 1
            server.docs.clear()
            starting = server.starting = asyncio.ensure_future(self._start(server))
        await asyncio.shield(starting)
        assert server.client is not None
        return server.client

    async def _start(self, server: _Server) -> None:
        if server.client is not None:
            await server.client.close()
        try:
            argv, env = await server_command(
                server.spec.argv(), self.workspace, self.sandbox, unsandboxed=self.settings.unsandboxed
            )
        except NoSandbox as exc:
            server.failure = (
                f"{server.spec.name} not started: language servers run the repository's code, and there is no "
                f"sandbox here ({exc}); `[lsp] unsandboxed = true` in your config runs them outside it"
            )
            raise LspUnavailable(server.failure) from None
        client = server.client = LspClient(argv, env, self.workspace)
        try:
            await client.start()
        except OSError as exc:
            client.gone = f"could not start: {exc.strerror or exc}"
            raise ServerGone(client.gone) from None
        try:
            await asyncio.wait_for(client.initialize(self.workspace), STARTUP_SECONDS)
        except TimeoutError:
            await client.close()
            client.gone = f"no answer to initialize within {STARTUP_SECONDS:.0f} s"
            raise ServerGone(client.gone) from None

    # -- what the user sees, the end --------------------------------------------------------
    def status(self) -> list[LanguageServerStatus]:
        """Each server cairn knows or was configured with, for /status."""
        out: list[LanguageServerStatus] = []
        for spec in self.specs:
            server = self._servers.get(spec.name)
            if server is None:
                out.append(LanguageServerStatus(name=spec.name, state="not found", detail=spec.command[0]))
            elif server.failure is not None:
                out.append(LanguageServerStatus(name=spec.name, state="failed", detail=server.failure))
            elif server.starting is None:
                out.append(LanguageServerStatus(name=spec.name, state="not started", detail=" ".join(spec.extensions)))
            elif not server.starting.done():
                out.append(LanguageServerStatus(name=spec.name, state="starting"))
            elif server.client is not None and server.client.alive:
                out.append(LanguageServerStatus(name=spec.name, state="running", detail=" ".join(spec.extensions)))
            else:
                gone = server.client.gone if server.client is not None else None
                out.append(LanguageServerStatus(name=spec.name, state="stopped", detail=gone or ""))
        return out

    async def close(self) -> None:
        """Stop every server (the session ends): a start under way is cancelled, then closed."""
        for server in self._servers.values():
            if server.starting is not None and not server.starting.done():
                server.starting.cancel()
                await asyncio.gather(server.starting, return_exceptions=True)
            if server.client is not None:
                await server.client.close()
