"""Everything behind a front end (the TUI, `cairn -p`, the ACP server): settings, store, session, agent.

Front ends open one `Runtime` (the TUI does it in a worker after its first frame, so litellm
and the database stay off the path to the first screen), drive it only with `submit(op)`
(agent/runtime/ops.py), and render the events it emits (agent/turn/events.py). What they read
(the history, the sessions, `/context`'s report, the MCP servers' states) are query methods;
they never touch the agent, the store or the loop (tests/architecture/test_front_ends.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agent.process.background import in_daemon_thread
from agent.runtime import ops
from agent.runtime.backend_load import load_backend
from agent.runtime.errors import SessionNotFound
from agent.runtime.notice_log import NoticeLog, notices_among
from agent.runtime.opening import FrontEnd, check_sandbox, lsp_manager, mcp_manager, open_parts
from agent.runtime.sessions import SessionChanges
from agent.runtime.windows import WindowDiscovery
from agent.session.models import Message, Session, SessionNotice, SessionSummary
from agent.settings.schema import Settings
from agent.turn.events import ModeChanged, Notice, TurnError, TurnFinished  # loaded with the session models

if TYPE_CHECKING:
    from agent.commands.invocation import CommandSource
    from agent.lsp.manager import LanguageServerStatus
    from agent.mcp.client_requests import Elicit
    from agent.mcp.manager import McpManager, ServerStatus
    from agent.mcp.prompts import RemotePrompt
    from agent.session.branches import SessionBranch
    from agent.session.restore_journal import Recovered
    from agent.session.rewind import FileRestore, RewindPoint
    from agent.session.store import Store
    from agent.skills.catalog import SkillCatalog
    from agent.subagents.definitions import AgentDefinition
    from agent.tools.background_tasks import TaskView
    from agent.turn.loop import Agent

log = logging.getLogger(__name__)
MAX_LISTED_REFS = 20  # /context lists the newest context files
R = TypeVar("R")
Handler = Callable[[Any], Awaitable[Any]]


class Runtime:
    def __init__(
        self, settings: Settings, store: Store, agent: Agent, model: str, warm_tokenizer: str | None = None
    ) -> None:
        self.settings = settings
        self.store = store
        self.agent = agent
        self.model = model
        self._turn: asyncio.Task | None = None
        self._warm_tokenizer = warm_tokenizer
        self._backend: asyncio.Future | None = None
        self._litellm_load: asyncio.Future | None = None  # after a /model switch to a litellm provider
        self._sandbox_check: asyncio.Future | None = None  # a notice when commands cannot be sandboxed
        self.windows = WindowDiscovery(settings, agent)  # a custom api_base's server asked for its window
        # Restores rolled forward at open (session/restore_journal.py), for a front end to mention.
        self.recovered: list[Recovered] = []
        self.notices: NoticeLog | None = None  # what turns told the user, kept (runtime/notice_log.py)
        # MCP servers (agent/mcp/manager.py): started with the backend, behind the first screen.
        self.mcp: McpManager | None = None
        self.elicit: Elicit | None = None  # the front end's form for a server's elicitation (FrontEnd.elicit)
        self.sessions = SessionChanges(store, settings, agent, busy=lambda: self.busy, model=lambda: self.model)
        # Ops that take time: each runs as a task the caller awaits (agent/runtime/ops.py).
        self._handlers: dict[type[ops.Op], Handler] = {
            ops.Prompt: self._prompt,
            ops.Compact: lambda op: self._run(self.agent.compact(op.instructions)),
            ops.Shell: self._shell,
            ops.NewSession: lambda op: self.sessions.new(),
            ops.OpenSession: lambda op: self.sessions.open(op.session_id),
            ops.DeleteSession: lambda op: self.sessions.delete(op.session_id),
            ops.Rename: lambda op: self.sessions.rename(op.title),
            ops.Fork: lambda op: self.sessions.fork(),
            ops.Rewind: lambda op: self.sessions.rewind(op.message_id, restore_files=op.restore_files),
            ops.SwitchBranch: lambda op: self.sessions.switch_branch(op.leaf_id, restore_files=op.restore_files),
            ops.Export: self._export,
            ops.RestartMcp: self._restart_mcp,
            ops.TrustMcpJson: lambda op: self._trust_mcp_json(),
            ops.StopTask: lambda op: self.agent.tasks.stop_id(op.task_id, "user"),
        }
        # Ops that take effect at once (even within a running turn): done before submit returns.
        self._immediate: dict[type[ops.Op], Callable[[Any], Any]] = {
            ops.Interrupt: lambda op: self._interrupt(),
            ops.SetMode: lambda op: self._set_mode(op.mode),
            ops.SetModel: lambda op: self._set_model(op.model),
            ops.SetEffort: lambda op: self._set_effort(op.effort),
        }

    # -- the one way in -------------------------------------------------------------
    def submit(self, op: ops.Op[R]) -> asyncio.Future[R]:
        """Do what `op` asks; its result (or error) arrives through the returned future.

        An op that takes effect at once (interrupt, mode, model, effort) is done before this
        returns, and a refusal (an unknown mode) raises here; the others run as a task, so a
        front end awaits it or goes on drawing. Cancelling the awaiting caller interrupts a
        turn as Esc would."""
        immediate = self._immediate.get(type(op))
        if immediate is not None:
            done: asyncio.Future[R] = asyncio.get_running_loop().create_future()
            done.set_result(cast(R, immediate(op)))
            return done
        handler = self._handlers.get(type(op))
        if handler is None:
            raise TypeError(f"not an op the runtime knows: {op!r}")
        return asyncio.ensure_future(cast(Coroutine[Any, Any, R], handler(op)))

    # -- construction -------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        settings: Settings,
        front: FrontEnd,
        *,
        resume_id: str | None = None,
        continue_last: bool = False,
        warm_up: bool = True,
    ) -> Runtime:
        """Open the store, pick the model, create or resume the session, with what the front
        end decides (`front`, agent/runtime/opening.py) given to the agent from the start.

        Raises NoModelConfigured when no model can be chosen (the UI shows how to set one),
        SessionNotFound when `resume_id` matches nothing. `warm_up` also pays litellm's
        first-request costs now (worth it for an interactive front end).
        """
        opened = await open_parts(settings, front, resume_id=resume_id, continue_last=continue_last)
        agent = opened.agent
        runtime = cls(settings, opened.store, agent, opened.model, settings.context.tokenizer if warm_up else None)
        runtime.recovered = opened.recovered
        runtime.notices = opened.notices
        opened.notices.recording = lambda: runtime.busy  # a turn's lines, not start-up's
        runtime.mcp = mcp_manager(settings, agent, front.editor_mcp, front.elicit)
        lsp_manager(settings, agent)  # language servers (agent/lsp/), in the tools' context
        runtime.elicit = front.elicit
        agent.ctx.mode_changed = runtime._mode_changed
        agent.hooks.session_started(opened.source)  # in the background; the first prompt waits for its context
        return runtime

    def start_backend(self) -> None:
        """Begin loading litellm (and the tokenizer) in a thread. A front end calls this once
        its screen is drawn: the import holds the GIL for seconds and would slow drawing."""
        if self._backend is None:
            litellm = self._needs_litellm(self.model)
            self._backend = asyncio.ensure_future(in_daemon_thread(load_backend, self._warm_tokenizer, litellm))
            self.windows.start(self.model)
            if self.mcp is not None:
                self.mcp.start()
            self._sandbox_check = asyncio.ensure_future(check_sandbox(self.settings, self.agent))

    async def wait_for_mcp(self) -> None:
        """`cairn -p`: give the MCP servers up to `mcp.headless_wait` seconds to be ready before
        the first request (a server that fails meanwhile is a `Note:`; the run goes on)."""
        if self.mcp is not None:
            self.start_backend()
            await self.mcp.wait_ready(self.settings.mcp.headless_wait)

    async def ready(self) -> None:
        """Wait until litellm (for a model the fast path does not carry) and the tokenizer (for
        a front end) are loaded, and the model's server said its window (a custom api_base
        only; at most a few seconds, in parallel)."""
        self.start_backend()
        assert self._backend is not None  # start_backend() made it
        await asyncio.shield(self._backend)
        window = self.windows.probe(self.model)
        if window is not None:
            await asyncio.wait([window])  # never raises: a failure means the default window

    @property
    def backend_ready(self) -> bool:
        backend = self._backend
        window = self.windows.probe(self.model)
        return (
            backend is not None
            and backend.done()
            and not backend.cancelled()
            and backend.exception() is None
            and (window is None or window.done())
        )

    # -- what front ends read ---------------------------------------------------------
    @property
    def session(self) -> Session:
        """The agent's session: it is replaced when the title is set or /new runs."""
        return self.agent.session

    @property
    def context_window(self) -> int | None:
        """None until litellm's model table is loaded (the status bar fills it in then)."""
        return self.agent.limits.context_window if self.backend_ready else None

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    @property
    def mode(self) -> str:
        """The permission mode (agent/tools/modes.py): this runtime's, in memory; a new launch
        starts in `settings.permission_mode` again."""
        return self.agent.permissions.mode

    @property
    def session_cost(self) -> float:
        """What the session has cost so far (subagents included), as of its loaded history."""
        return self.agent.session_cost

    @property
    def chosen_effort(self) -> str | None:
        """The session's `/effort` (None: the configured efforts apply)."""
        return self.agent.builder.effort

    def effort(self, model: str | None = None) -> str | None:
        """The effort the next request to `model` (default: the current one) asks for; None:
        the model's own default (agent/llm/reasoning.py `effort_for`)."""
        from agent.llm.reasoning import effort_for

        return effort_for(self.settings, model or self.model, self.chosen_effort)

    def known_windows(self) -> dict[str, int]:
        """The windows the models' servers reported so far (`/model` shows them)."""
        return {model: found.tokens for model, found in self.agent.discovered_windows.items()}

    def background_tasks(self, *, with_output: bool = False) -> list[TaskView]:
        """`/tasks`: the session's background tasks (their newest output too if asked); ops.StopTask ends one."""
        return self.agent.tasks.views(with_output=with_output)

    def mcp_status(self) -> list[ServerStatus]:
        """`/mcp`: each server's state and tools (agent/mcp/manager.py::ServerStatus)."""
        return self.mcp.status() if self.mcp is not None else []

    def language_servers(self) -> list[LanguageServerStatus]:  # /status: agent/lsp/manager.py
        return self.agent.ctx.lsp.status() if self.agent.ctx.lsp is not None else []

    def mcp_problems(self) -> list[str]:
        return list(self.mcp.problems) if self.mcp is not None else []

    def mcp_prompts(self) -> list[RemotePrompt]:
        """The ready servers' prompts, as commands: `/{command} {hint}` (agent/mcp/prompts.py);
        typed as a `Prompt`, the runtime runs it (`mcp_commands()`)."""
        return self.mcp.prompts() if self.mcp is not None else []

    async def history_tail(self, limit: int) -> list[Message]:
        """The newest `limit` messages of what `history()` gives: enough to draw the screen of a
        long session without reading all of it."""
        from agent.session.loading import drop_unmatched_tool_calls

        tail = await self.store.active_path(self.session.id, limit=limit)
        while tail and tail[0].role == "tool" and len(tail) == limit:
            tail.pop(0)  # its call is further back: show whole exchanges only
        return drop_unmatched_tool_calls(tail)

    async def history_notices(self, shown: list[Message]) -> list[SessionNotice]:
        """What turns told the user among the `shown` messages, in order (runtime/notice_log.py)."""
        return await notices_among(self.store, self.session.id, shown)

    async def history(self) -> list[Message]:
        """The active path of the session, for display (seed 002's load-time view)."""
        from agent.session.loading import load_session_messages

        return await load_session_messages(self.store, self.session.id)

    async def billed_messages(self) -> list[Message]:
        """Every stored message of the session, rewound branches too (`/cost`: what was billed;
        each answer keeps its usage and cost, a subagent's result its child's cost)."""
        return await self.store.all_messages(self.session.id)

    async def context_report(self, now_ms: int | None = None) -> dict:
        """The pass-by-pass report of the next request (the same build the loop runs)."""
        from agent.context.inspect import MAX_LISTED_EVENTS, context_report
        from agent.session.models import now_ms as clock

        await self.ready()
        history = await self.agent.current_history()
        report = context_report(
            history,
            settings=self.settings,
            session_id=self.session.id,
            model=self.model,
            workspace=self.settings.workspace,
            now_ms=now_ms if now_ms is not None else clock(),
            last_request=await self.store.last_request(self.session.id),
            limits=self.agent.limits,
            tools=self.agent.offered_tools(),
        )
        report["events"] = [
            e.model_dump() for e in await self.store.context_events(self.session.id, limit=MAX_LISTED_EVENTS)
        ]
        files = self.agent.ctx.context_files
        report["refs"] = [ref.model_dump() for ref in await files.list(limit=MAX_LISTED_REFS)] if files else []
        return report

    async def list_sessions(self, limit: int = 1000) -> list[SessionSummary]:
        """Every folder's sessions, newest first (the picker filters)."""
        return await self.sessions.list(limit)

    async def rewind_points(self) -> list[RewindPoint]:
        """The active path's user turns, newest first (the ESC ESC menu)."""
        return await self.sessions.rewind_points()

    async def plan_file_restore(self, message_id: str) -> list[FileRestore]:
        """What "conversation and files" would do to each file the agent changed since that turn."""
        return await self.sessions.plan_file_restore(message_id)

    async def branches(self, limit: int = 20) -> list[SessionBranch]:
        """Ends of the other branches of this session (abandoned by rewinds), newest first."""
        return await self.sessions.branches(limit)

    async def plan_branch_files(self, leaf_id: str) -> list[FileRestore]:
        """What bringing the files to where that branch left them would do, file by file."""
        return await self.sessions.plan_branch_files(leaf_id)

    async def subagents(self) -> list[Session]:
        """The sessions this session's subagents ran, oldest first (`/agents`)."""
        return await self.store.subagent_sessions(self.session.id)

    def agent_definitions(self) -> list[AgentDefinition]:
        """The agents there are now (`/agents`; agent/subagents/definitions.py): read again when
        their folders changed since the `subagent` tool read them (its list follows at the next turn)."""
        from agent.subagents.definitions import load_definitions, stamp
        from agent.subagents.tool import SubagentTool

        tool = self.agent.registry.get("subagent")
        if isinstance(tool, SubagentTool) and tool.stamp == stamp(self.settings.workspace):
            return list(tool.definitions.values())
        return list(load_definitions(self.settings.workspace).values())

    def skills(self) -> SkillCatalog:
        """The skills there are now and the notices of those skipped (`/skills`;
        agent/skills/catalog.py::SkillCatalog): found again when their folders changed since the
        agent found them (the model's catalog follows at its next turn)."""
        from agent.skills.catalog import refreshed

        return refreshed(self.agent.skills, self.settings.workspace) or self.agent.skills

    async def subagent_history(self, session_id: str) -> tuple[Session, list[Message]]:
        """A subagent's session and its whole conversation, to read (`/agents N`; never to continue)."""
        session = await self.store.get_session(session_id)
        if session is None or not session.agent:
            raise SessionNotFound(session_id)
        return session, await self.store.active_path(session.id)

    async def subagent_transcript(self, session_id: str) -> str:
        """A subagent's whole conversation as Markdown (an export's form)."""
        from agent.session.export import export_markdown

        return export_markdown(*await self.subagent_history(session_id))

    # -- the ops' handlers ------------------------------------------------------------
    async def _run(self, work: Coroutine[Any, Any, R], *, wait_ready: bool = True) -> R:
        """Run a turn-like piece of work: busy meanwhile, interruptible, one at a time."""
        try:
            if wait_ready:
                await self.ready()
        except BaseException:
            work.close()
            raise
        self._turn = asyncio.ensure_future(work)
        try:
            return await asyncio.shield(self._turn)
        except asyncio.CancelledError:
            # The caller itself was cancelled: interrupt the turn and let it clean up.
            self._turn.cancel()
            await asyncio.gather(self._turn, return_exceptions=True)
            raise
        finally:
            self._turn = None

    async def _prompt(self, op: ops.Prompt) -> None:
        """The user's message, or the command it invokes (agent/runtime/command_turn.py).
        MCP prompts join the command sources here (`sources(self.agent, …)`)."""
        from agent.mcp.connection import McpCallError
        from agent.runtime.command_turn import run_prompt, sources

        try:
            await self._run(run_prompt(self.agent, op.text, sources(self.agent, *self.mcp_commands())))
        except McpCallError as exc:  # an MCP prompt that could not be had: nothing was sent
            self.agent.emit(TurnError(message=str(exc)))
            self.agent.emit(TurnFinished(status="error"))

    def mcp_commands(self) -> list[CommandSource]:
        """The MCP prompts as a command source (agent/mcp/commands.py), for the runtime's lookup
        and a front end's `/` listing; [] without MCP servers."""
        from agent.mcp.commands import McpPromptCommands

        return [McpPromptCommands(self.mcp)] if self.mcp is not None else []

    async def _shell(self, op: ops.Shell) -> Message:
        """`!command` (agent/runtime/shell.py): needs no model, so it does not wait for litellm."""
        from agent.runtime.shell import shell_note

        return await self._run(
            shell_note(op.command, self.agent.settings, self.agent.writer, op.on_output), wait_ready=False
        )

    def _interrupt(self) -> bool:
        if self.busy:
            assert self._turn is not None  # busy: a turn runs
            self._turn.cancel()
            return True
        return False

    async def _export(self, op: ops.Export) -> Path:
        def warn(problem: str) -> None:
            self.agent.emit(Notice(message=f"Export: {problem}", kind="warning"))

        return await self.sessions.export(op.fmt, op.path, warn)

    async def _restart_mcp(self, op: ops.RestartMcp) -> str:
        if self.mcp is None:
            raise KeyError(op.name)
        connection = await self.mcp.restart(op.name)
        await self.mcp.wait_ready(self.settings.mcp.startup_timeout)
        return connection.state

    async def _trust_mcp_json(self) -> int:
        if self.mcp is None:
            self.mcp = mcp_manager(self.settings, self.agent, {}, self.elicit)  # no editor servers: it would exist
            if self.mcp is None:
                return 0
            self.mcp.started = True  # its problems were the untrusted file: do not repeat them
        return await self.mcp.trust_project_servers()

    def _set_model(self, model: str) -> None:
        self.model = model
        self.agent.set_model(model)
        if self._backend is not None:
            self.windows.start(model)
            if self._needs_litellm(model) and self._litellm_load is None:
                # A switch to a provider litellm carries: its import starts now, off the loop.
                from agent.llm.offline import import_litellm

                self._litellm_load = asyncio.ensure_future(in_daemon_thread(import_litellm))

    def _needs_litellm(self, model: str) -> bool:
        """Whether `model` (or the condense model) goes through litellm, not the fast path."""
        from agent.llm.route import fast_wire

        models = [model, self.settings.context.condense_model]
        return any(fast_wire(m, self.settings.api_base, self.settings.llm.client) is None for m in models if m)

    def _set_mode(self, mode: str) -> None:
        """Takes effect at the next approval check (even within a running turn); the model is
        told with the next user message."""
        from agent.tools.modes import is_mode

        if not is_mode(mode):
            raise ValueError(f"unknown mode {mode!r}: one of default, acceptEdits, plan")
        self.agent.permissions.mode = mode  # type: ignore[assignment]  # checked by is_mode above
        self._mode_changed(mode)

    def _mode_changed(self, mode: str) -> None:
        self.agent.emit(ModeChanged(mode=mode))

    def _set_effort(self, effort: str | None) -> None:
        """off | minimal | low | medium | high for the rest of this session, over the configured
        efforts; None goes back to them. The request builder reads it on every request
        (agent/llm/reasoning.py `effort_for`)."""
        from agent.llm.reasoning import EFFORTS

        if effort is not None and effort not in EFFORTS:
            raise ValueError(f"unknown effort {effort!r}: one of {', '.join(EFFORTS)}")
        self.agent.builder.effort = effort

    async def close(self) -> None:
        """Interrupt a running turn, let it store what it produced, then close the store."""
        turn = self._turn
        if self._interrupt() and turn is not None:
            await asyncio.gather(turn, return_exceptions=True)
        await self.agent.tasks.end_all()  # nothing a background task started outlives the session
        if self.mcp is not None:
            await self.mcp.close()
        if self.agent.ctx.lsp is not None:
            await self.agent.ctx.lsp.close()
        await self.agent.hooks.session_ended("other")  # SessionEnd, each hook within its timeout
        await self.agent.hooks.close()  # a SessionStart or Notification hook still running
        if self._sandbox_check is not None:
            self._sandbox_check.cancel()
        try:
            await self.agent.connections.aclose()
        except Exception:  # a connection that will not close cleanly: the process ends anyway
            log.warning("could not close the provider connections", exc_info=True)
        if self.notices is not None:
            await self.notices.settle()
        try:
            # A launch quit before anything was asked leaves no session behind (`--continue`
            # and `cairn session list` would only show it as noise).
            await self.store.prune_if_empty(self.session.id)
        except Exception:  # a busy or read-only database: the empty session just stays (listings skip it)
            log.warning("could not remove the empty session %s", self.session.id, exc_info=True)
        finally:
            await self.store.close()
