"""The Agent Client Protocol's agent side, over stdio, with the `agent-client-protocol` package.

Each ACP session is one cairn session with its own `Runtime` (store, loop, approvals): new
sessions are created in the folder the editor names, `session/load` resumes a stored one and
replays its history. A prompt runs one turn; its events stream as session updates
(updates.py); approvals go to the editor (approvals.py); `session/cancel` interrupts the turn
as Esc does. The permission modes (agent/tools/modes.py) are the session's modes: listed by
`session/new` and `session/load`, switched by `session/set_mode`, changes reported as
`current_mode_update` (also a plan approved through exit-plan-mode). When the editor offers
`fs/read_text_file`, `filesystem-read` reads text files through it (client_files.py: unsaved
buffers included); when it offers `fs/write_text_file`, every file cairn's edit tools change
is also handed to it, so its open buffers follow. The MCP servers the editor passes with a
session (stdio or HTTP) are started for it, beside those of cairn's own configuration.

Standard output is the protocol's channel: nothing else may be written there.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from agent import __version__
from agent.acp import updates
from agent.acp.approvals import EditorApprover
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Interrupt, Prompt, SetMode
from agent.settings.schema import McpServerSettings
from agent.tools.modes import MODE_INFO, MODES, is_mode
from agent.turn.events import AssistantFinished, Event, ToolFinished, ToolStarted, TurnFinished

if TYPE_CHECKING:
    from agent.tools.registry import ToolRegistry

log = logging.getLogger("agent.acp")
WRITE_TOOLS = ("filesystem-edit", "filesystem-create")
STOP_REASONS = {"ok": "end_turn", "interrupted": "cancelled", "error": "end_turn", "limit": "max_turn_requests"}


class AcpSession:
    """One editor session: its runtime and the ordered stream of updates to the editor."""

    def __init__(self, conn: Any, runtime, approver: EditorApprover, writes_through_client: bool) -> None:
        self.conn = conn
        self.runtime = runtime
        self.approver = approver
        self.writes_through_client = writes_through_client
        self.queue: asyncio.Queue = asyncio.Queue()
        self.pump = asyncio.ensure_future(self._pump())
        self.status = "ok"
        self.cut_off = False

    @property
    def id(self) -> str:
        return self.runtime.session.id

    def on_event(self, event: Event) -> None:
        """The loop's sink (synchronous): updates are queued and sent in order by the pump."""
        if isinstance(event, ToolStarted):
            self.approver.current_call_id = event.call.id
        elif isinstance(event, TurnFinished):
            self.status = event.status
        elif isinstance(event, AssistantFinished) and event.message.meta.get("finish_reason") == "length":
            self.cut_off = True
        if (
            isinstance(event, ToolFinished)
            and self.writes_through_client
            and event.call.name in WRITE_TOOLS
            and event.message.status == "ok"
        ):
            self.queue.put_nowait(("write", event))
        for update in updates.for_event(event):
            self.queue.put_nowait(("update", update))

    async def send_all(self, items) -> None:
        for update in items:
            self.queue.put_nowait(("update", update))
        await self.queue.join()

    async def _pump(self) -> None:
        while True:
            kind, item = await self.queue.get()
            try:
                if kind == "update":
                    await self.conn.session_update(session_id=self.id, update=item)
                else:
                    await self._write_through_client(item)
            except Exception:  # the editor refused one update: the session goes on
                log.exception("sending %s to the editor failed", kind)
            finally:
                self.queue.task_done()

    async def _write_through_client(self, event: ToolFinished) -> None:
        """Hand the file the tool just changed to the editor (same bytes as on disk)."""
        path = _changed_path(event, self.runtime.settings.workspace)
        if path is None:
            return
        try:
            content = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return
        await self.conn.write_text_file(session_id=self.id, path=str(path), content=content)

    async def close(self) -> None:
        await self.runtime.close()
        self.pump.cancel()
        await asyncio.gather(self.pump, return_exceptions=True)


def _changed_path(event: ToolFinished, workspace: Path) -> Path | None:
    import json

    try:
        args = json.loads(event.call.arguments or "{}")
    except ValueError:
        return None
    name = args.get("filePath") if isinstance(args, dict) else None
    if not isinstance(name, str):
        return None
    path = Path(name).expanduser()
    return (path if path.is_absolute() else workspace / path).resolve()


class CairnAcpAgent:
    """The protocol's agent: what the package's router calls for each request."""

    def __init__(self, flags: dict[str, Any]) -> None:
        self.flags = flags
        self.conn: Any = None
        self.sessions: dict[str, AcpSession] = {}
        self.client_writes = False
        self.client_reads = False

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs: Any
    ) -> InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        self.client_writes = bool(getattr(fs, "write_text_file", False))
        self.client_reads = bool(getattr(fs, "read_text_file", False))
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="cairn", title="cairn", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # keys come from the environment, flags or config, as for the TUI

    async def new_session(self, cwd: str, mcp_servers=None, **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, resume_id=None, mcp_servers=mcp_servers)
        return NewSessionResponse(session_id=session.id, modes=session_modes(session.runtime.mode))

    async def load_session(self, cwd: str, session_id: str, mcp_servers=None, **kwargs: Any) -> LoadSessionResponse:
        session = self.sessions.get(session_id) or await self._open(cwd, resume_id=session_id, mcp_servers=mcp_servers)
        await session.send_all(updates.for_history(await session.runtime.history()))
        return LoadSessionResponse(modes=session_modes(session.runtime.mode))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """`session/set_mode`: the next approval check decides in that mode (agent/tools/modes.py)."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        if not is_mode(mode_id):
            raise RequestError.invalid_params({"modeId": f"unknown mode {mode_id!r}: one of {', '.join(MODES)}"})
        session.runtime.submit(SetMode(mode_id))
        return SetSessionModeResponse()

    def _editor_tools(self, holder: list[AcpSession]) -> Callable[[ToolRegistry], ToolRegistry] | None:
        """Files open in the editor read as the user sees them, when it offers `fs/read_text_file`."""
        if not self.client_reads:
            return None
        from agent.acp.client_files import with_editor_reads

        return lambda registry: with_editor_reads(registry, self.conn, lambda: holder[0].id)

    async def _open(self, cwd: str, resume_id: str | None, mcp_servers=None) -> AcpSession:
        from agent.runtime.errors import NoModelConfigured, SessionNotFound
        from agent.runtime.runtime import Runtime
        from agent.session.errors import StoreOpenError
        from agent.settings.config import load_settings

        folder = Path(cwd)
        if not folder.is_dir():
            raise RequestError.invalid_params({"cwd": f"{cwd} is not a folder"})
        settings = load_settings(folder, flags=self.flags)
        holder: list[AcpSession] = []
        approver = EditorApprover(self.conn, session_id="")
        try:
            runtime = await Runtime.open(
                settings,
                FrontEnd(
                    on_event=lambda e: holder[0].on_event(e) if holder else None,
                    approver=approver,
                    plan_review=approver.review_plan,
                    tools=self._editor_tools(holder),
                    editor_mcp=editor_servers(mcp_servers or []),
                ),
                resume_id=resume_id,
            )
        except NoModelConfigured:
            raise RequestError.invalid_params(
                {
                    "model": "no model configured: start cairn acp with --model, set "
                    "CAIRN_MODEL or a provider key such as ANTHROPIC_API_KEY"
                }
            ) from None
        except SessionNotFound as exc:
            raise RequestError.resource_not_found(str(exc)) from None
        except StoreOpenError as exc:
            raise RequestError.internal_error({"store": str(exc)}) from None
        runtime.start_backend()
        session = AcpSession(self.conn, runtime, approver, self.client_writes)
        approver.session_id = session.id
        holder.append(session)
        self.sessions[session.id] = session
        return session

    async def prompt(self, session_id: str, prompt: list, **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.resource_not_found(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"prompt": "no text in the prompt"})
        session.status, session.cut_off = "ok", False
        # The editor's servers were configured for this session: its first prompt gets their
        # tools (as `cairn -p` does, up to `mcp.headless_wait`); later prompts do not wait.
        await session.runtime.wait_for_mcp()
        await session.runtime.submit(Prompt(text))
        await session.queue.join()  # every update of this turn reaches the editor before the answer
        reason = "max_tokens" if session.cut_off and session.status == "ok" else STOP_REASONS[session.status]
        return PromptResponse(stop_reason=reason)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.runtime.submit(Interrupt())

    async def close(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()


def session_modes(current: str) -> SessionModeState:
    """The session modes the editor offers (its mode menu), and the one in force."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=m, name=MODE_INFO[m][0], description=MODE_INFO[m][1]) for m in MODES],
    )


def editor_servers(servers: list) -> dict[str, McpServerSettings]:
    """The MCP servers the editor passed (`session/new`, `session/load`) as config tables: stdio
    and streamable HTTP; SSE, which cairn does not speak (and does not advertise), is left out
    with a log line. A later server of the same name replaces an earlier one."""
    out: dict[str, McpServerSettings] = {}
    for server in servers:
        name = getattr(server, "name", None)
        if not isinstance(name, str) or not name.strip():
            continue
        if getattr(server, "type", None) == "sse":
            log.warning("MCP server %r from the editor uses SSE, which cairn does not speak: not started", name)
            continue
        if getattr(server, "url", None):
            out[name] = McpServerSettings(url=server.url, headers={h.name: h.value for h in server.headers or []})
        elif getattr(server, "command", None):
            out[name] = McpServerSettings(
                command=server.command, args=list(server.args or []), env={e.name: e.value for e in server.env or []}
            )
    return out


def prompt_text(blocks: list) -> str:
    """The prompt's text: text blocks as they are, embedded files as tagged context, links named."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            if getattr(resource, "text", None) is not None:
                parts.append(f'<context uri="{resource.uri}">\n{resource.text}\n</context>')
        elif kind == "resource_link":
            parts.append(f"@{block.uri}")
    return "\n\n".join(parts)


def serve(flags: dict[str, Any]) -> int:
    """`cairn acp`: serve until the editor closes stdin."""

    async def main() -> None:
        agent = CairnAcpAgent(flags)
        try:
            # acp looks each handler up by name: one cairn lacks answers "method not found".
            await run_agent(agent)  # type: ignore[arg-type]  # implements only part of acp's Agent Protocol
        finally:
            await agent.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        return 130
    return 0
