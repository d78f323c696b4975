"""Opening what a runtime holds: the store, the model, the session (new, resumed or continued),
and the agent working on it, with everything a front end decides given at that moment.

A front end says at open who answers approvals, who reviews a plan, the run's limits and any tool
it replaces (an editor's file reads); it never patches the agent afterwards. The key of the
model is registered as a secret before anything else can print or pass it on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent.process.background import in_daemon_thread
from agent.runtime.errors import NoModelConfigured, SessionNotFound
from agent.runtime.notice_log import NoticeLog
from agent.settings.schema import McpServerSettings, Settings
from agent.turn.events import Event, Notice

if TYPE_CHECKING:
    from agent.lsp.manager import LspManager
    from agent.mcp.client_requests import Elicit
    from agent.mcp.manager import McpManager
    from agent.session.restore_journal import Recovered
    from agent.session.store import Store
    from agent.tools.modes import PlanReviewer
    from agent.tools.permissions import Approver
    from agent.tools.registry import ToolRegistry
    from agent.turn.loop import Agent
    from agent.turn.policies import RunPolicy

EventSink = Callable[[Event], None]


@dataclass(frozen=True)
class FrontEnd:
    """What the front end opening a runtime decides for it (agent/runtime/runtime.py `open`).

    `approver`: who answers an approval (None: nobody can, the question is refused as `-p` does).
    `plan_review`: how exit-plan-mode's plan is shown (None: nobody can). `guard`: an unattended
    run's limits and tool filter. `tools`: the registry as this front end wants it (an editor's
    `filesystem-read` through its buffers). `editor_mcp`: MCP servers an editor passed over ACP.
    `elicit`: the form an MCP server asks the user to fill in (None: declined with the reason)."""

    on_event: EventSink
    approver: Approver | None = None
    plan_review: PlanReviewer | None = None
    guard: RunPolicy | None = None
    tools: Callable[[ToolRegistry], ToolRegistry] | None = None
    editor_mcp: dict[str, McpServerSettings] = field(default_factory=dict)
    elicit: Elicit | None = None


@dataclass
class Opened:
    store: Store
    agent: Agent
    model: str
    source: str  # for the SessionStart hooks: startup | resume
    recovered: list[Recovered]
    notices: NoticeLog  # the agent's event sink, which keeps a turn's lines (runtime/notice_log.py)


async def open_parts(settings: Settings, front: FrontEnd, *, resume_id: str | None, continue_last: bool) -> Opened:
    """Raises NoModelConfigured when no model can be chosen, SessionNotFound when `resume_id`
    matches nothing; the store is closed again on any failure."""
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
        session = None
        source = "resume"
        if resume_id:
            session = await store.find_session(resume_id)
            if session is None:
                raise SessionNotFound(resume_id)
        elif continue_last:
            session = await store.latest_session(str(settings.workspace), with_messages=True)
        if session is None:
            session = await store.create_session(cwd=str(settings.workspace), model=model)
            source = "startup"
        notices = NoticeLog(store, front.on_event)
        agent = Agent(
            settings=settings,
            store=store,
            session=session,
            model=model,
            on_event=notices,
            approver=front.approver,
            guard=front.guard,
        )
    except BaseException:
        # aiosqlite's thread is not a daemon: an open store would keep the process alive.
        await store.close()
        raise
    if front.tools is not None:
        agent.registry = front.tools(agent.registry)
    # The hooks' transcript is the active path; a matcher naming no tool offered is told.
    agent.hooks.attach(
        history=lambda: agent.state.history,
        tools=lambda: [t.name for t in agent.registry.tools()],
        model=lambda: agent.model,
    )
    agent.ctx.plan_review = front.plan_review
    notices.session = lambda: agent.session
    return Opened(store=store, agent=agent, model=model, source=source, recovered=recovered, notices=notices)


def mcp_manager(
    settings: Settings, agent: Agent, editor: dict[str, McpServerSettings], elicit: Elicit | None = None
) -> McpManager | None:
    """The MCP servers' manager, wired to the agent: tools into its registry, failures as notices.
    None when no server is configured or passed by the editor and the project has no `.mcp.json`."""
    from agent.mcp.manager import REGISTRY_GROUP, McpManager
    from agent.mcp.servers import MCP_JSON

    if not settings.mcp.servers and not editor and not (settings.workspace / MCP_JSON).is_file():
        return None
    return McpManager(
        settings,
        on_tools=lambda tools: agent.registry.set_group(REGISTRY_GROUP, tools),
        notify=lambda message, kind: agent.emit(Notice(message=message, kind=kind)),
        editor=editor,
        elicit=elicit,
    )


def lsp_manager(settings: Settings, agent: Agent) -> LspManager | None:
    """The session's language servers (agent/lsp/), put in the tools' context (closed with the
    runtime, listed by /status); the `lsp` tool is offered only when one was found (and could
    start). None: `[lsp] enabled = false`."""
    from agent.lsp.manager import LspManager
    from agent.tools.lsp_tool import REGISTRY_GROUP, Lsp

    if not settings.lsp.enabled:
        return None
    manager = agent.ctx.lsp = LspManager(settings.lsp, settings.workspace, agent.permissions.sandbox)
    if manager.offered:
        agent.registry.set_group(REGISTRY_GROUP, [Lsp(manager)])
    return manager


async def check_sandbox(settings: Settings, agent: Agent) -> None:
    """Find out once whether commands can be sandboxed here; if not, say why (once)."""
    sandbox = agent.permissions.sandbox
    if sandbox is None:
        return
    await in_daemon_thread(sandbox.probe)
    if not sandbox.available:
        agent.emit(Notice(message=sandbox.unavailable_notice(settings.sandbox.rules), kind="warning"))


def _import_agent() -> None:
    import agent.turn.loop  # noqa: F401 - the store, aiosqlite, the tools, the pipeline (not litellm)
