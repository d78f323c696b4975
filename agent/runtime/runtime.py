"""Everything behind a front end (TUI or headless): settings, store, session, agent.

Front ends build one `Runtime` (the TUI does it in a worker after its first frame, so
litellm and the database stay off the path to the first screen), feed it prompts, and
render the events it emits. They never touch the store or the loop directly.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.paths import exports_dir
from agent.process.background import in_daemon_thread
from agent.runtime.backend_load import load_backend
from agent.runtime.errors import NoModelConfigured, RuntimeBusy, SessionNotFound
from agent.runtime.windows import WindowDiscovery
from agent.session.models import Message, Session, SessionSummary
from agent.settings.config import McpServerSettings, Settings
from agent.tools.modes import PlanReviewer
from agent.tools.permissions import Approver
from agent.turn.events import Event

if TYPE_CHECKING:
    from agent.headless.limits import RunGuard
    from agent.session.branches import SessionBranch

EventSink = Callable[[Event], None]
log = logging.getLogger(__name__)
MAX_LISTED_REFS = 20  # /context lists the newest context files


class Runtime:
    def __init__(self, settings: Settings, store, agent, model: str, warm_tokenizer: str | None = None) -> None:
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
        self.recovered: list = []
        # MCP servers (agent/mcp/manager.py): started with the backend, behind the first screen.
        self.mcp = None

    # -- construction -------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        on_event: EventSink,
        approver: Approver | None,
        resume_id: str | None = None,
        continue_last: bool = False,
        warm_up: bool = True,
        editor_mcp: dict[str, McpServerSettings] | None = None,
        plan_review: PlanReviewer | None = None,
        guard: RunGuard | None = None,
    ) -> Runtime:
        """Open the store, pick the model, create or resume the session.

        `editor_mcp`: MCP servers an editor passed over ACP for this session, started with
        those of the configuration. `plan_review`: how the front end shows exit-plan-mode's
        plan to the user (None: nobody can, as in `cairn -p`). `guard`: an unattended run's
        limits and tool filter (agent/headless/limits.py), the agent's from its first request.

        Raises NoModelConfigured when no model can be chosen (the UI shows how to set one),
        SessionNotFound when `resume_id` matches nothing. `warm_up` also pays litellm's
        first-request costs now (worth it for an interactive front end).
        """
        from agent.llm.models import resolve_model

        model = resolve_model(settings)
        if not model:
            raise NoModelConfigured()
        # Imports happen in threads so a front end's event loop keeps drawing. The session
        # (and so the screen) needs only the store; litellm and the tokenizer load behind it.
        await in_daemon_thread(_import_agent)
        from agent.llm.client import keys_in_use
        from agent.process.secrets import hide_from_proc, remember_secret
        from agent.session.store import Store
        from agent.turn.loop import Agent

        # The key stays out of what a model's command could read: its environment, and
        # this process's argv (`--api-key`) and environment as /proc shows them.
        keys = keys_in_use(model, settings.api_key)
        for key in keys:
            remember_secret(key)
        hide_from_proc(keys)

        store = await Store.open()
        try:
            # A rewind a killed process left half done is finished before any session is read.
            from agent.session.restore_journal import recover

            recovered = await recover(store)
            session: Session | None = None
            source = "resume"  # for the SessionStart hooks: startup | resume | clear
            if resume_id:
                session = await store.find_session(resume_id)
                if session is None:
                    raise SessionNotFound(resume_id)
            elif continue_last:
                session = await store.latest_session(str(settings.workspace), with_messages=True)
            if session is None:
                session = await store.create_session(cwd=str(settings.workspace), model=model)
                source = "startup"
            agent = Agent(
                settings=settings, store=store, session=session, model=model, on_event=on_event, approver=approver, guard=guard
            )
        except BaseException:
            # aiosqlite's thread is not a daemon: an open store would keep the process alive.
            await store.close()
            raise
        runtime = cls(settings, store, agent, model, settings.context.tokenizer if warm_up else None)
        runtime.recovered = recovered
        runtime.mcp = _mcp_manager(settings, agent, editor_mcp or {})
        agent.ctx.plan_review = plan_review
        agent.ctx.mode_changed = runtime._mode_changed
        agent.hooks.session_started(source)  # in the background; the first prompt waits for its context
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
            self._sandbox_check = asyncio.ensure_future(self._check_sandbox())

    async def _check_sandbox(self) -> None:
        """Find out once whether commands can be sandboxed here; if not, say why (once)."""
        sandbox = self.agent.permissions.sandbox
        if sandbox is None:
            return
        await in_daemon_thread(sandbox.probe)
        if not sandbox.available:
            from agent.turn.events import Notice

            self.agent.emit(Notice(message=sandbox.unavailable_notice(self.settings.sandbox.rules), kind="warning"))

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

    def known_windows(self) -> dict[str, int]:
        """The windows the models' servers reported so far (`/model` shows them)."""
        return {model: found.tokens for model, found in self.agent.discovered_windows.items()}

    def mcp_status(self) -> list:
        """`/mcp`: each server's state and tools (agent/mcp/manager.py::ServerStatus)."""
        return self.mcp.status() if self.mcp is not None else []

    def mcp_problems(self) -> list[str]:
        return list(self.mcp.problems) if self.mcp is not None else []

    async def restart_mcp(self, name: str) -> str:
        """Restart one MCP server; waits (bounded) and returns its state. KeyError: no such server."""
        if self.mcp is None:
            raise KeyError(name)
        connection = await self.mcp.restart(name)
        await self.mcp.wait_ready(self.settings.mcp.startup_timeout)
        return connection.state

    async def trust_mcp_json(self) -> int:
        """Trust the project's `.mcp.json` as it is now and start its servers (OSError: not recorded)."""
        if self.mcp is None:
            self.mcp = _mcp_manager(self.settings, self.agent, {})  # no editor servers: it would exist
            if self.mcp is None:
                return 0
            self.mcp.started = True  # its problems were the untrusted file: do not repeat them
        return await self.mcp.trust_project_servers()

    # -- what front ends call -----------------------------------------------------
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

    async def run_turn(self, text: str) -> None:
        """Run one user turn to the end (or until `interrupt()`); events go to on_event."""
        await self._run(self.agent.run_turn(text))

    async def compact(self, instructions: str | None = None) -> None:
        """`/compact [instructions]`: condense the conversation now. Runs like a turn (busy,
        interruptible); a refusal (too few messages) or failure arrives as a TurnError event."""
        await self._run(self.agent.compact(instructions))

    async def run_shell(self, command: str, on_output: Callable[[str], None] | None = None) -> Message:
        """`!command` (agent/runtime/shell.py): the user's own command, run unasked in the
        workspace; its output is stored as a note the next request carries. Busy and
        interruptible like a turn; needs no model, so it does not wait for litellm."""
        from agent.runtime.shell import shell_note

        return await self._run(shell_note(self.agent, command, on_output), wait_ready=False)

    async def _run(self, work, *, wait_ready: bool = True) -> Any:
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

    def interrupt(self) -> bool:
        """Stop the running turn (stream cancelled, tool processes killed). True if one ran."""
        if self.busy:
            assert self._turn is not None  # busy: a turn runs
            self._turn.cancel()
            return True
        return False

    async def history_tail(self, limit: int) -> list[Message]:
        """The newest `limit` messages of what `history()` gives: enough to draw the screen of a
        long session without reading all of it."""
        from agent.session.loading import drop_unmatched_tool_calls

        tail = await self.store.active_path(self.session.id, limit=limit)
        while tail and tail[0].role == "tool" and len(tail) == limit:
            tail.pop(0)  # its call is further back: show whole exchanges only
        return drop_unmatched_tool_calls(tail)

    async def history(self) -> list[Message]:
        """The active path of the session, for display (seed 002's load-time view)."""
        from agent.session.loading import load_session_messages

        return await load_session_messages(self.store, self.session.id)

    async def billed_messages(self) -> list[Message]:
        """Every stored message of the session, rewound branches too (`/cost`: what was billed;
        each answer keeps its usage and cost, a subagent's result its child's cost)."""
        return await self.store.all_messages(self.session.id)

    @property
    def session_cost(self) -> float:
        """What the session has cost so far (subagents included), as of its loaded history."""
        return self.agent.session_cost

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

    # -- sessions: picker, rename, fork, rewind -----------------------------------
    async def list_sessions(self, limit: int = 1000) -> list[SessionSummary]:
        """Every folder's sessions, newest first (the picker filters)."""
        return await self.store.list_summaries(limit=limit)

    async def subagents(self) -> list[Session]:
        """The sessions this session's subagents ran, oldest first (`/agents`)."""
        return await self.store.subagent_sessions(self.session.id)

    def agent_definitions(self) -> list[Any]:
        """The agents the `subagent` tool offers (agent/subagents/definitions.py)."""
        tool = self.agent.registry.get("subagent")
        return list(getattr(tool, "definitions", {}).values())

    def skills(self) -> Any:
        """The skills the model can load and the notices of those skipped (`/skills`;
        agent/skills/catalog.py::SkillCatalog), as found when the agent was made."""
        return self.agent.skills

    async def subagent_transcript(self, session_id: str) -> str:
        """A subagent's whole conversation as Markdown, to read (never to continue)."""
        from agent.session.export import export_markdown

        session = await self.store.get_session(session_id)
        if session is None or not session.agent:
            raise SessionNotFound(session_id)
        return export_markdown(session, await self.store.active_path(session.id))

    async def open_session(self, session_id: str) -> Session:
        """Switch to a stored session (the picker's Enter); its history loads on the next read."""
        if self.busy:
            raise RuntimeBusy()
        session = await self.store.find_session(session_id)
        if session is None:
            raise SessionNotFound(session_id)
        await self._switch(session)
        self.agent.hooks.session_started("resume")
        return session

    async def delete_session(self, session_id: str) -> None:
        """Remove a session for good; deleting the open one starts a fresh session."""
        if session_id == self.session.id:
            if self.busy:
                raise RuntimeBusy()
            await self.new_session()
        await self.store.delete_session(session_id)

    async def rename(self, title: str) -> Session:
        session = await self.store.update_session(self.session, title=" ".join(title.split()))
        self.agent.session = session
        return session

    async def fork(self) -> Session:
        """Copy the active path (and its file checkpoints) into a new session and switch to it."""
        from agent.session.fork import fork_session

        if self.busy:
            raise RuntimeBusy()
        fork = await fork_session(self.store, self.session, self.model)
        await self._switch(fork)
        return fork

    async def rewind_points(self):
        """The active path's user turns, newest first (the ESC ESC menu)."""
        from agent.session.rewind import rewind_points

        path = await self.store.active_path(self.session.id)
        return rewind_points(path, await self.store.file_changes(self.session.id))

    async def plan_file_restore(self, message_id: str):
        """What "conversation and files" would do to each file the agent changed since that turn."""
        from agent.session.rewind import plan_restore

        path = await self.store.active_path(self.session.id)
        return plan_restore(
            path, message_id, await self.store.file_changes(self.session.id), workspace=self.settings.workspace
        )

    async def rewind(self, message_id: str, *, restore_files: bool):
        """Move the head to just before that user turn (and optionally restore files)."""
        from agent.session.rewind import RewindOutcome, rewind_with_files

        if self.busy:
            raise RuntimeBusy()
        target = await self.store.get_message(message_id)
        if target is None or target.session_id != self.session.id or target.role != "user":
            raise SessionNotFound(message_id)
        outcome = RewindOutcome(text=target.content or "")
        if restore_files:  # journaled: files and head together, even across a kill -9
            plan = await self.plan_file_restore(message_id)
            session = await rewind_with_files(self.store, self.session, plan, outcome, target.parent_id)
        else:
            session = await self.store.set_head(self.session, target.parent_id)
        self._set_head(session)
        return outcome

    async def branches(self, limit: int = 20) -> list[SessionBranch]:
        """Ends of the other branches of this session (abandoned by rewinds), newest first."""
        from agent.session.branches import other_branches

        return await other_branches(self.store, self.session, limit)

    async def plan_branch_files(self, leaf_id: str):
        """What bringing the files to where that branch left them would do, file by file."""
        from agent.session.rewind import plan_branch_files

        return await plan_branch_files(self.store, self.session, leaf_id, workspace=self.settings.workspace)

    async def switch_branch(self, leaf_id: str, *, restore_files: bool = False):
        """Move the head to another branch's end; with `restore_files` its file changes are
        re-applied, journaled like a rewind's restore."""
        from agent.session.rewind import RewindOutcome, rewind_with_files

        if self.busy:
            raise RuntimeBusy()
        outcome = RewindOutcome(text="")
        plan = await self.plan_branch_files(leaf_id) if restore_files else []
        self._set_head(await rewind_with_files(self.store, self.session, plan, outcome, leaf_id))
        return outcome

    def _set_head(self, session: Session) -> None:
        """Same session, new head: history reloads, approvals given in this session stay."""
        self.agent.session = session
        self.agent.history = None

    async def export(self, fmt: str = "md", path: Path | None = None) -> Path:
        """Write the session to a file, as `cairn session export` would (default:
        `cairn-<id8>.<fmt>` in the data folder's exports/). ValueError: an unknown format."""
        from agent.session.exporting import export_text
        from agent.turn.events import Notice

        session = await self.store.get_session(self.session.id) or self.session
        text = await export_text(
            self.store,
            session,
            fmt,
            context=self.settings.context,
            warn=lambda problem: self.agent.emit(Notice(message=f"Export: {problem}", kind="warning")),
        )
        # No path: the data folder's exports/, never the user's repository (a stray file there
        # gets committed); the caller prints where it went.
        target = path or exports_dir() / f"cairn-{session.id[:8]}.{fmt}"
        if not target.is_absolute():
            target = self.settings.workspace / target
        await asyncio.to_thread(_write_text, target, text)
        return target

    async def new_session(self) -> Session:
        session = await self.store.create_session(cwd=str(self.settings.workspace), model=self.model)
        await self._switch(session)
        self.agent.hooks.session_started("clear")
        return session

    async def _switch(self, session: Session) -> None:
        """Make `session` the agent's; the one left is removed if nothing was asked in it."""
        left = self.session.id
        self.agent.switch_session(session)
        if left != session.id:
            await self.store.prune_if_empty(left)

    def set_model(self, model: str) -> None:
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

    @property
    def mode(self) -> str:
        """The permission mode (agent/tools/modes.py): this runtime's, in memory; a new launch
        starts in `settings.permission_mode` again."""
        return self.agent.permissions.mode

    def set_mode(self, mode: str) -> None:
        """Shift+Tab, ACP `session/set_mode`: takes effect at the next approval check (even
        within a running turn); the model is told with the next user message."""
        from agent.tools.modes import is_mode

        if not is_mode(mode):
            raise ValueError(f"unknown mode {mode!r}: one of default, acceptEdits, plan")
        self.agent.permissions.mode = mode
        self._mode_changed(mode)

    def _mode_changed(self, mode: str) -> None:
        from agent.turn.events import ModeChanged

        self.agent.emit(ModeChanged(mode=mode))

    def set_effort(self, effort: str | None) -> None:
        """How much a model that reasons thinks, for the rest of this session (`/effort`, like
        `--effort`): off | minimal | low | medium | high, over the configured efforts; None
        goes back to them (or the model's own default). The request builder reads it on every
        request (agent/llm/reasoning.py `effort_for`)."""
        from agent.llm.reasoning import EFFORTS

        if effort is not None and effort not in EFFORTS:
            raise ValueError(f"unknown effort {effort!r}: one of {', '.join(EFFORTS)}")
        self.settings.effort = effort  # type: ignore[assignment]  # checked against EFFORTS above

    async def close(self) -> None:
        """Interrupt a running turn, let it store what it produced, then close the store."""
        turn = self._turn
        if self.interrupt() and turn is not None:
            await asyncio.gather(turn, return_exceptions=True)
        if self.mcp is not None:
            await self.mcp.close()
        await self.agent.hooks.close()  # a SessionStart or Notification hook still running
        if self._sandbox_check is not None:
            self._sandbox_check.cancel()
        try:
            await self.agent.connections.aclose()
        except Exception:  # a connection that will not close cleanly: the process ends anyway
            log.warning("could not close the provider connections", exc_info=True)
        try:
            # A launch quit before anything was asked leaves no session behind (`--continue`
            # and `cairn session list` would only show it as noise).
            await self.store.prune_if_empty(self.session.id)
        except Exception:  # a busy or read-only database: the empty session just stays (listings skip it)
            log.warning("could not remove the empty session %s", self.session.id, exc_info=True)
        finally:
            await self.store.close()


def _mcp_manager(settings: Settings, agent, editor: dict[str, McpServerSettings]):
    """The MCP servers' manager, wired to the agent: tools into its registry, failures as notices.
    None when no server is configured or passed by the editor and the project has no `.mcp.json`."""
    from agent.mcp.manager import REGISTRY_GROUP, McpManager
    from agent.mcp.servers import MCP_JSON
    from agent.turn.events import Notice

    if not settings.mcp.servers and not editor and not (settings.workspace / MCP_JSON).is_file():
        return None
    return McpManager(
        settings,
        on_tools=lambda tools: agent.registry.set_group(REGISTRY_GROUP, tools),
        notify=lambda message, kind: agent.emit(Notice(message=message, kind=kind)),
        editor=editor,
    )


def _write_text(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode("utf-8"))


def _import_agent() -> None:
    import agent.turn.loop  # noqa: F401 - the store, aiosqlite, the tools, the pipeline (not litellm)
