"""Running a subagent (SPEC §13.3): a child conversation with a context of its own.

The child is an `Agent` like the parent — same loop, request builder, context passes, store —
on a session of its own (`Session.agent` names its definition, `parent_call_id` the call it
answers), so its whole transcript is kept and can be opened after the fact, while the parent
gets only its final answer as the tool result: none of the child's reads enter the parent's
requests.

A child is a narrower parent, never a wider one. Its tools are the intersection of what the
parent may use (its registry, less what the run's `--allowed-tools`/`--disallowed-tools`
hide: `child_tools`) and what the definition lists, never `subagent` itself. Its permissions
are the parent's settings and approver (the question names the agent) with a mode that is
the parent's at each check, or plan whenever the parent or a read-only definition says so
(`ChildPermissions`), so neither `--yolo` nor a mode switch makes it wider than its parent.
A headless run's limits are the child's too: its loop asks the run's guard through
`for_child`, which counts its requests and cost into the run's as they happen and stops it
(agent/headless/limits.py). Its model is the definition's held to the user's endpoint
(agent/subagents/models.py). Cost is the parent session's: the child's is on the tool result
(`meta.cost`), which the session's total sums on resume.

The parent's interrupt reaches the child: the child's turn runs in a task the parent waits
on; when the parent is cancelled, the child is cancelled and its own clean-up (kill its
processes, answer its open calls, keep its partial text) runs to the end before the parent's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol, cast

from agent.hooks.dispatch import MAX_STOP_CONTINUES, Hooks
from agent.session.models import Message, Session
from agent.settings.schema import Settings
from agent.subagents.definitions import AgentDefinition
from agent.subagents.models import choose_child_model
from agent.subagents.tool import NAME as SUBAGENT_TOOL
from agent.tools.base import Tool, ToolContext, ToolResult
from agent.tools.modes import Mode
from agent.tools.permissions import ApprovalRequest, Approver, Decision, Permissions
from agent.tools.registry import ToolRegistry
from agent.turn.events import (
    Event,
    LimitReached,
    Notice,
    Retrying,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
)
from agent.turn.hook_steps import STOP_NOTE
from agent.turn.policies import RunPolicy
from agent.turn.state import TurnState
from agent.turn.writer import SessionWriter

log = logging.getLogger("agent.turn.children")

TITLE_CHARS = 60
PROGRESS_ARGUMENT_CHARS = 80
# A child runs no children of its own, and has no user to present a plan to.
NOT_FOR_CHILDREN = frozenset({SUBAGENT_TOOL, "exit-plan-mode"})

SUBAGENT_PREAMBLE = """\
# You are a subagent
Another agent sent you the task in the first user message; it sees only your final message,
never your tool calls or their output. Work through the task with your tools, then end with
one final answer that stands on its own: what you found or did, with file paths (and line
numbers) and the facts the other agent needs, and what you could not do. No greetings, no
questions back: nobody can answer them."""


class ChildAgent(Protocol):
    """What the runner sets and reads of a child it made: an agent.turn.loop.Agent (not
    imported: the loop imports this module)."""

    registry: ToolRegistry
    permissions: Permissions
    hooks: Hooks
    guard: RunPolicy | None
    system_prompt: str
    announce_mode: bool

    @property
    def ctx(self) -> ToolContext: ...

    @property
    def state(self) -> TurnState: ...

    async def run_turn(self, text: str) -> None: ...

    async def current_history(self) -> list[Message]: ...


class MakeChild(Protocol):
    """Makes a child agent (the parent's settings, store and connections) on `session`."""

    def __call__(
        self, *, session: Session, model: str, on_event: Callable[[Event], None], approver: Approver | None
    ) -> ChildAgent: ...


class ChildRunner:
    """The parent's way to run children; owned by the parent `Agent` (one per agent): its
    settings, `state` (model, session, registry, system prompt, read as a child starts),
    `writer` (the child's session is created through it), tool context (a child's permissions
    are tied to its), events, and run `guard` (a child's is its `for_child`)."""

    def __init__(
        self,
        *,
        settings: Settings,
        state: TurnState,
        writer: SessionWriter,
        ctx: ToolContext,
        emit: Callable[[Event], None],
        guard: Callable[[], RunPolicy | None],
        make_agent: MakeChild,
        max_parallel: int,
    ) -> None:
        self.settings = settings
        self.state = state
        self.writer = writer
        self.ctx = ctx
        self.emit = emit
        self.guard = guard
        self.make_agent = make_agent
        self.slots = asyncio.Semaphore(max(1, max_parallel))

    async def run(
        self, definition: AgentDefinition, task: str, *, call_id: str, progress: Callable[[str], None] | None
    ) -> ToolResult:
        async with self.slots:
            return await self._run(definition, task, call_id=call_id, progress=progress)

    async def _run(
        self, definition: AgentDefinition, task: str, *, call_id: str, progress: Callable[[str], None] | None
    ) -> ToolResult:
        settings, parent = self.settings, self.state
        chosen = choose_child_model(
            definition.model, parent.model, api_base=settings.api_base, api_key=settings.api_key
        )
        if chosen.note:
            log.warning("the %s agent: %s", definition.name, chosen.note)
            self.emit(Notice(message=f"The {definition.name} agent runs on {chosen.model}: {chosen.note}."))
        model = chosen.model
        session = await self.writer.persist(
            self.writer.store.create_session(
                cwd=parent.session.cwd,
                model=model,
                title=f"{definition.name}: {' '.join(task.split())[:TITLE_CHARS]}",
                parent_session_id=parent.session.id,
                agent=definition.name,
                parent_call_id=call_id or None,
            )
        )
        watcher = _ChildEvents(definition.name, progress)
        child = self.make_agent(
            session=session,
            model=model,
            on_event=watcher,
            approver=_naming(definition.name, task, self.ctx.permissions.approver),
        )
        self._confine(child, definition)
        try:
            return await self._drive(child, definition, task, watcher)
        finally:  # the child's background tasks end with it (the parent's table never sees them)
            if child.ctx.tasks is not None:
                await child.ctx.tasks.end_all()

    async def _drive(
        self, child: ChildAgent, definition: AgentDefinition, task: str, watcher: _ChildEvents
    ) -> ToolResult:
        session = child.state.session
        hooks: Hooks | None = self.ctx.hooks  # SubagentStart/SubagentStop are the parent's events
        # The transcript the child's own hooks read, written through the parent's (one writer per file).
        child.hooks.attach(history=lambda: child.state.history, parent=hooks)
        if hooks is not None:
            added = await hooks.subagent_started(definition.name, session.id)
            if added:
                child.system_prompt += f"\n\n[SubagentStart hook]\n{added}"
        await _turn(child, task)
        for stops in range(MAX_STOP_CONTINUES):  # a SubagentStop hook may send it back to work
            if hooks is None or watcher.status != "ok":
                break
            history = await child.current_history()
            reason = await hooks.subagent_stopped(definition.name, session.id, history, active=stops > 0)
            if reason is None:
                break
            await _turn(child, STOP_NOTE.format(reason=reason))
        history = await child.current_history()
        return _result(definition, child.state, history, watcher)

    def _confine(self, child: ChildAgent, definition: AgentDefinition) -> None:
        """The child's tools, permissions and run limits: never more than the parent's."""
        parent_guard = self.guard()
        guard = parent_guard.for_child(definition.name) if parent_guard is not None else None
        child.guard = guard
        child.registry = ToolRegistry(
            child_tools(self.state.registry.tools(), definition, guard.offered if guard is not None else None)
        )
        child.ctx.context_files.tool_definitions = child.registry.definitions
        child.ctx.lsp = self.ctx.lsp  # the session's language servers: a child's edits are diagnosed too
        permissions = ChildPermissions.tied(
            self.settings, child.permissions.approver, self.ctx.permissions, plan_only=definition.mode == "plan"
        )
        permissions.read_roots = child.permissions.read_roots
        child.permissions = permissions  # the child's tool context's too
        child.announce_mode = False
        child.system_prompt = "\n\n".join(
            p for p in (self.state.system_prompt, SUBAGENT_PREAMBLE, definition.prompt.strip()) if p
        )


def child_tools(
    parents: list[Tool], definition: AgentDefinition, offered: Callable[[str], bool] | None = None
) -> list[Tool]:
    """What a child may call: the parent's tools the run offers (`offered`: the run guard's
    `--allowed-tools`/`--disallowed-tools` test, None outside a headless run), less the ones
    no child gets, cut to the definition's list when it has one. An intersection: nothing a
    definition names is added, whatever it names."""
    tools = [t for t in parents if t.name not in NOT_FOR_CHILDREN and (offered is None or offered(t.name))]
    if definition.tools is not None:
        listed = set(definition.tools)
        tools = [t for t in tools if t.name in listed]
    return tools


class ChildPermissions(Permissions):
    """A child's permissions: its own approver (naming the agent), sandbox and questions; the
    parent's rules (the same settings, `--yolo` the parent's) and a mode read from the parent
    at every check, so a switch during the child's run (Shift+Tab, ACP) reaches it as it
    reaches the parent (agent/runtime/runtime.py `set_mode`). Plan whenever the parent is in
    plan mode or the definition only reads (`plan_only`); setting the mode can only narrow it."""

    parent: Permissions | None = None
    plan_only = False
    _own_mode: Mode = "default"  # before it is tied: what Permissions.__init__ set

    @classmethod
    def tied(
        cls, settings: Settings, approver: Approver | None, parent: Permissions, *, plan_only: bool
    ) -> ChildPermissions:
        made = cast(ChildPermissions, cls.from_settings(settings, approver))
        made.parent = parent
        made.plan_only = plan_only
        made.yolo = made.yolo and parent.yolo
        if not plan_only:  # one user, one set of "always this session" answers
            made.always = parent.always
        return made

    @property
    def mode(self) -> Mode:
        if self.parent is None:
            return self._own_mode
        if self.plan_only or self.parent.mode == "plan":
            return "plan"
        return self.parent.mode

    @mode.setter
    def mode(self, value: Mode) -> None:
        if self.parent is None:
            self._own_mode = value
        elif value == "plan":
            self.plan_only = True


class _ChildEvents:
    """What the parent shows of a running child: each tool it starts, as a line of the
    `subagent` call's live output; and what it needs afterwards (the error, the status)."""

    def __init__(self, name: str, progress: Callable[[str], None] | None) -> None:
        self.name = name
        self.progress = progress
        self.error = ""
        self.status = "ok"
        self.tool_calls = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            self.tool_calls += 1
            arguments = " ".join((event.call.arguments or "").split())
            if len(arguments) > PROGRESS_ARGUMENT_CHARS:
                arguments = arguments[: PROGRESS_ARGUMENT_CHARS - 1] + "…"
            self._say(f"{event.call.name} {arguments}".rstrip())
        elif isinstance(event, ToolFinished) and event.message.status == "error":
            self._say(f"{FAILED_MARK} {_failure(event.message)}")  # told apart from a call that ran
        elif isinstance(event, Retrying):
            self._say(f"retrying ({event.attempt}/{event.max_attempts}): {event.reason}")
        elif isinstance(event, TurnError):
            self.error = event.message
            self._say(f"error: {event.message}")
        elif isinstance(event, LimitReached):  # the run's limit: the parent stops next (limits.py)
            self.error = event.message
            self._say(event.message)
        elif isinstance(event, TurnFinished):
            self.status = event.status

    def _say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(f"{line}\n")


FAILED_MARK = "✗"  # a progress line saying the call before it was refused or failed
REFUSALS = frozenset({"deny", "refused", "plan"})  # permission decisions (agent/tools/permissions.py)


def _failure(message: Message) -> str:
    """ "refused: …" (the user, the mode or a PreToolUse hook said no) or "failed: …", with the
    result's first line."""
    permission = message.meta.get("permission") or {}
    said_no = isinstance(permission, dict) and permission.get("decision") in REFUSALS
    word = "refused" if said_no or message.meta.get("hook") == "PreToolUse" else "failed"
    first = next((line.strip() for line in (message.content or "").splitlines() if line.strip()), "")
    first = first.removeprefix("Error:").strip()
    if len(first) > PROGRESS_ARGUMENT_CHARS:
        first = first[: PROGRESS_ARGUMENT_CHARS - 1] + "…"
    return f"{word}: {first}" if first else word


ASKER_TASK_CHARS = 40  # of the child's task in its approvals' titles: two children's questions told apart


def _naming(name: str, task: str, approver: Approver | None) -> Approver | None:
    """The parent's approver, asked with the agent's name and its task (shortened) in the
    question: two children running at once each ask as `[general agent] Run command` else."""
    if approver is None:
        return None
    words = " ".join(task.split())
    said = words if len(words) <= ASKER_TASK_CHARS else words[: ASKER_TASK_CHARS - 1].rstrip() + "…"

    async def ask(request: ApprovalRequest) -> Decision:
        return await approver(request.model_copy(update={"title": f"[{name} agent: {said}] {request.title}"}))

    return ask


def _result(definition: AgentDefinition, child: TurnState, history: list[Message], watcher: _ChildEvents) -> ToolResult:
    answer = next((m for m in reversed(history) if m.role == "assistant" and (m.content or "").strip()), None)
    requests = sum(1 for m in history if m.role == "assistant")
    usage = {
        "prompt_tokens": sum(int((m.meta.get("usage") or {}).get("prompt_tokens") or 0) for m in history),
        "completion_tokens": sum(int((m.meta.get("usage") or {}).get("completion_tokens") or 0) for m in history),
    }
    meta: dict[str, Any] = {
        "subagent": {
            "agent": definition.name,
            "session_id": child.session.id,
            "model": child.model,
            "requests": requests,
            "tool_calls": watcher.tool_calls,
            "status": watcher.status,
            **usage,
        },
        "cost": child.session_cost,
    }
    last = history[-1] if history else None
    finished = last is not None and last.role == "assistant" and not last.tool_calls and last.status == "ok"
    if answer is not None and finished:
        return ToolResult(content=answer.content or "", meta=meta)
    why = watcher.error or (
        "it stopped before answering" if watcher.status == "ok" else f"its turn ended: {watcher.status}"
    )
    partial = f"\nWhat it said last:\n{answer.content}" if answer is not None else ""
    return ToolResult.error(f"the {definition.name} agent did not finish: {why.rstrip('.')}.{partial}", **meta)


async def _turn(child: ChildAgent, text: str) -> None:
    """One turn of the child; the parent's interrupt cancels it and waits for its clean-up."""
    turn = asyncio.ensure_future(child.run_turn(text))
    try:
        await asyncio.shield(turn)
    except asyncio.CancelledError:
        turn.cancel()
        await _finished(turn)
        raise


async def _finished(turn: asyncio.Future[None]) -> None:
    """Wait for the cancelled child's clean-up to end, however often the user presses Esc."""
    while not turn.done():
        try:
            await asyncio.shield(turn)
        except asyncio.CancelledError:
            continue
        except Exception:
            log.exception("a subagent's turn failed while stopping")
            return
