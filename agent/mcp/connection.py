"""One MCP server: start it, list its tools and prompts, call them, notice when it dies, stop it.

The `mcp` package's `Client` is entered and left in one task (its anyio task groups and
cancel scopes demand it): `_serve` holds the connection open until asked to stop, pinging
the server now and then so a server that died while idle is noticed. Calls come from the
loop's task and go through the same client. Whatever goes wrong (a command that does not
exist, a server that exits, never answers, or answers nonsense) ends as a state and one
readable line; nothing raises into the caller except `McpCallError` from `call` and `prompt`.
The client answers the server's own requests (roots, elicitation: agent/mcp/client_requests.py)
and keeps the server's `instructions` (agent/mcp/instructions.py) for its tools.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent.mcp import instructions as server_instructions
from agent.mcp.client_requests import Elicit, elicitation_callback, roots_callback
from agent.mcp.names import unique_names
from agent.mcp.paging import read_pages
from agent.mcp.prompts import RemotePrompt, list_prompts, prompt_text
from agent.mcp.schema import bounded_description, bounded_schema
from agent.mcp.servers import ServerSpec

log = logging.getLogger("agent.mcp")

State = Literal["starting", "ready", "failed", "stopped"]
HEALTH_CHECK_SECONDS = 15.0
PING_TIMEOUT_SECONDS = 10.0
STOP_TIMEOUT_SECONDS = 10.0
MAX_TOOL_PAGES = 20
MAX_TOOLS_PER_SERVER = 500
MAX_ERROR_CHARS = 300
STDERR_TAIL_BYTES = 400
# A call's own timeout is the server's `timeout`; this backstop covers an SDK that never returns.
CALL_GRACE_SECONDS = 5.0


class McpCallError(Exception):
    """A call could not be made or did not complete; the message is for the model."""


@dataclass
class RemoteTool:
    """A server's tool as cairn exposes it."""

    server: str
    name: str  # the server's own name
    exposed: str  # mcp__<server>__<tool>, sanitised
    description: str
    schema: dict[str, Any]
    note: str = ""  # why the server's schema was replaced by a permissive one

    def definition(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.exposed, "description": self.description, "parameters": self.schema},
        }


def readable_error(exc: BaseException) -> str:
    """One line for an exception, an ExceptionGroup reduced to its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = getattr(getattr(exc, "error", None), "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}" + (f": {exc.filename}" if exc.filename else "")
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def _is_closed(exc: BaseException) -> bool:
    import mcp_types

    return getattr(getattr(exc, "error", None), "code", None) == mcp_types.CONNECTION_CLOSED


def _is_timeout(exc: BaseException) -> bool:
    import mcp_types

    return getattr(getattr(exc, "error", None), "code", None) == mcp_types.REQUEST_TIMEOUT


def _answered(exc: BaseException) -> bool:
    """The server answered the request, with an error of its own (not a closed connection or a timeout)."""
    code = getattr(getattr(exc, "error", None), "code", None)
    return code is not None and not _is_closed(exc) and not _is_timeout(exc)


class ServerConnection:
    def __init__(
        self,
        spec: ServerSpec,
        *,
        startup_timeout: float,
        log_dir: Path,
        on_change: Callable[[ServerConnection], None],
        workspace: Path | None = None,
        elicit: Elicit | None = None,
        told: Callable[[str], None] = lambda message: None,
    ) -> None:
        """`workspace`: the root cairn gives (`roots/list`); `elicit`: the front end's form
        (None: declined); `told`: a line for the user (a declined request)."""
        self.spec = spec
        self.workspace = Path(workspace or spec.cwd or ".")
        self.elicit = elicit
        self.told = told
        self.startup_timeout = startup_timeout
        self.log_dir = log_dir
        self.on_change = on_change
        self.state: State = "stopped"
        self.error = ""
        self.tools: list[RemoteTool] = []
        self.prompts: list[RemotePrompt] = []
        self.instructions = ""  # the server's, bounded (agent/mcp/instructions.py)
        self.settled = asyncio.Event()  # set once a start ended in "ready" or "failed"
        self._client: Any = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._log_start = 0

    @property
    def name(self) -> str:
        return self.spec.name

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self.state, self.error, self.tools, self.prompts = "starting", "", [], []
        self.settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(self._serve())
        loop = asyncio.get_running_loop()
        loop.call_later(self.startup_timeout, self._startup_expired, self._task)

    def _startup_expired(self, task: asyncio.Task) -> None:
        if task is self._task and self.state == "starting" and not task.done():
            self.error = f"did not start within {self.startup_timeout:g} s"
            task.cancel()

    async def stop(self) -> None:
        """Close the connection (a stdio server's process tree is ended by the SDK)."""
        task = self._task
        self._stop.set()
        if task is None:
            return
        done, _ = await asyncio.wait([task], timeout=STOP_TIMEOUT_SECONDS)
        if not done:
            task.cancel()
            await asyncio.wait([task], timeout=STOP_TIMEOUT_SECONDS)
        if self.state in ("ready", "starting"):
            self._set("stopped")

    async def restart(self) -> None:
        await self.stop()
        self.start()

    def _set(self, state: State, error: str = "") -> None:
        error = (error or self.error) if state == "failed" else ""
        changed = state != self.state or error != self.error
        self.state, self.error = state, error
        if state != "ready":
            self.tools, self.prompts = [], []
        if state in ("ready", "failed"):
            self.settled.set()
        if changed:
            try:
                self.on_change(self)
            except Exception:  # a front end's bug must not break the connection
                log.exception("MCP state callback failed")

    async def _serve(self) -> None:
        from agent.process.background import in_daemon_thread

        try:
            await in_daemon_thread(_import_sdk)  # seconds of imports, off the event loop
            client = self._make_client()
            async with client:
                self._client = client
                self.instructions = server_instructions.bounded(client.instructions)
                self.tools = await self._list_tools(client)
                self.prompts = await self._list_prompts(client)
                self._set("ready")
                await self._watch(client)
        except asyncio.CancelledError:
            if self.state == "starting" and self.error:  # our own start timer: an answer, not a shutdown
                self._set("failed", self.error)
                return
            if self.state in ("starting", "ready"):
                self._set("stopped")
            raise
        except Exception as exc:  # an exception group from the SDK's task groups, an OSError…
            why = readable_error(exc)
            tail = self._stderr_tail()
            self._set("failed", self.error or (f"{why}" + (f" (stderr: {tail})" if tail else "")))
            log.info("MCP server %s failed: %s", self.name, why, exc_info=True)
        finally:
            self._client = None
            if self.state == "ready":
                self._set("stopped")

    async def _watch(self, client: Any) -> None:
        """Hold the connection until stopped; a server that stops answering pings has failed."""
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._stop.wait(), HEALTH_CHECK_SECONDS)
                return
            except TimeoutError:
                pass
            try:
                await client.send_ping()
            except Exception as exc:
                if _answered(exc):  # an error the server sent (a 2026-07-28 server has no ping): it is there
                    continue
                self._set("failed", f"stopped answering ({readable_error(exc)})")
                return

    def _make_client(self) -> Any:
        from mcp import Client, StdioServerParameters

        spec = self.spec
        spec.ensure_unchanged()  # a project's server whose script changed since it was trusted does not start
        timeout = spec.timeout
        answers: dict[str, Any] = {
            "read_timeout_seconds": timeout,
            "list_roots_callback": roots_callback(self.workspace),
            "elicitation_callback": elicitation_callback(self.name, self.elicit, self.told),
        }
        if spec.transport == "http":
            from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

            http = create_mcp_http_client(headers=dict(spec.headers) or None)
            return Client(_OwnedHttp(streamable_http_client(spec.url or "", http_client=http), http), **answers)
        params = StdioServerParameters(
            command=spec.command or "", args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
        )
        return Client(_StdioWithLog(params, self._open_log()), **answers)

    def _open_log(self) -> Any:
        """The server's stderr goes to a file (never onto the TUI); its tail explains a failure."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        path = self.log_dir / f"mcp-{_file_safe(self.name)}.log"
        handle = open(path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115 - the server's stderr while it lives
        self._log_start = handle.tell()
        return handle

    def _stderr_tail(self) -> str:
        if self.spec.transport != "stdio":
            return ""
        path = self.log_dir / f"mcp-{_file_safe(self.name)}.log"
        try:
            with open(path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(self._log_start, size - STDERR_TAIL_BYTES))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return lines[-1][:200] if lines else ""

    async def _list_prompts(self, client: Any) -> list[RemotePrompt]:
        """The server's prompts when it offers any; a server that fails to list them keeps its tools."""
        if getattr(client.server_capabilities, "prompts", None) is None:
            return []
        try:
            return await list_prompts(client, self.name)
        except Exception as exc:
            log.info("MCP server %s: prompts/list failed: %s", self.name, readable_error(exc))
            return []

    async def _list_tools(self, client: Any) -> list[RemoteTool]:
        listed = await read_pages(
            lambda cursor: client.list_tools(cursor=cursor),
            "tools",
            max_pages=MAX_TOOL_PAGES,
            max_items=MAX_TOOLS_PER_SERVER,
        )
        exposed = unique_names(self.name, [t.name for t in listed])
        tools = []
        for tool in listed:
            schema, note = bounded_schema(tool.input_schema)
            description = bounded_description(tool.description or tool.title or "")
            if note:
                description = bounded_description(
                    f"{description} (cairn: {note}; pass the arguments the description names)"
                )
            tools.append(
                RemoteTool(
                    server=self.name,
                    name=tool.name,
                    exposed=exposed[tool.name],
                    description=description or f"Tool {tool.name} of MCP server {self.name}.",
                    schema=schema,
                    note=note,
                )
            )
        return tools

    # -- calls ------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The server's CallToolResult. Raises McpCallError (the server is not ready, died
        during the call, or did not answer within its timeout)."""
        client = self._client
        if self.state != "ready" or client is None:
            raise McpCallError(
                f"MCP server '{self.name}' is {self.state}"
                + (f": {self.error}" if self.error else "")
                + ". /mcp restarts it."
            )
        timeout = self.spec.timeout
        try:
            return await asyncio.wait_for(
                client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + CALL_GRACE_SECONDS
            )
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            raise McpCallError(f"MCP server '{self.name}' did not answer within {timeout:g} s") from None
        except Exception as exc:
            if _is_timeout(exc):
                raise McpCallError(f"MCP server '{self.name}' did not answer within {timeout:g} s") from None
            if _is_closed(exc) or self._stop.is_set():
                tail = self._stderr_tail()
                why = "the server stopped during the call" + (f" (stderr: {tail})" if tail else "")
                self._set("failed", why)
                self._stop.set()
                raise McpCallError(
                    f"MCP server '{self.name}' stopped while running {tool}; its tools are "
                    f"withdrawn until it is restarted (/mcp)."
                ) from None
            raise McpCallError(f"MCP server '{self.name}' refused the call: {readable_error(exc)}") from None

    async def prompt(self, name: str, arguments: dict[str, str]) -> str:
        """`prompts/get`'s messages as the user's prompt. Raises McpCallError."""
        client = self._client
        if self.state != "ready" or client is None:
            raise McpCallError(f"MCP server '{self.name}' is {self.state}" + (f": {self.error}" if self.error else ""))
        timeout = self.spec.timeout
        try:
            result = await asyncio.wait_for(client.get_prompt(name, arguments), timeout + CALL_GRACE_SECONDS)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            raise McpCallError(f"MCP server '{self.name}' did not answer within {timeout:g} s") from None
        except Exception as exc:
            raise McpCallError(f"MCP server '{self.name}' refused prompt {name}: {readable_error(exc)}") from None
        return prompt_text(result)


class _StdioWithLog:
    """The SDK's stdio transport with the server's stderr sent to a file we close afterwards."""

    def __init__(self, params: Any, errlog: Any) -> None:
        from mcp.client.stdio import stdio_client

        self._inner = stdio_client(params, errlog=errlog)
        self._errlog = errlog

    async def __aenter__(self) -> Any:
        try:
            return await self._inner.__aenter__()
        except BaseException:
            self._errlog.close()
            raise

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            self._errlog.close()


class _OwnedHttp:
    """The SDK's HTTP transport with the httpx client (which carries the headers) closed after."""

    def __init__(self, inner: Any, http: Any) -> None:
        self._inner = inner
        self._http = http

    async def __aenter__(self) -> Any:
        await self._http.__aenter__()
        try:
            return await self._inner.__aenter__()
        except BaseException as exc:
            await self._http.__aexit__(type(exc), exc, exc.__traceback__)
            raise

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            await self._http.__aexit__(None, None, None)


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "server"


def _import_sdk() -> None:
    import warnings

    # The health check pings every server; a 2026-07-28 one answers "Method not found", which
    # is still an answer (`_answered`): the SDK's deprecation warning would reach a `-p` stderr.
    warnings.filterwarnings("ignore", message=r"ping is removed")
    import mcp  # noqa: F401
    import mcp.client.stdio  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401
