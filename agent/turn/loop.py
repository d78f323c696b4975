"""The conversation loop: user message → build → stream → tools → repeat until done.

Every message is written the moment it exists. An interrupt (task cancellation) stops
the stream or the running tool, kills its processes, keeps the partial text with
status=interrupted and gives every unanswered tool call a result, so the stored history
always makes a valid next request.

The `Agent` builds the turn's helpers and hands each the few typed objects it uses (the
writer, the tool context, the hooks, the policies, the events, the shared `TurnState`),
never itself: agent/turn/model_step.py (one request), tool_steps.py (a message's calls),
budget_step.py (fitting the context), children.py (subagents), attachments.py (`@path`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from agent.context.budget import Budget, budget_for
from agent.context.builder import RequestBuilder
from agent.context.condense import CondenseError
from agent.context.manage import compact
from agent.hooks.dispatch import MAX_STOP_CONTINUES, HookBlocked
from agent.hooks.names import HOOK_CONTEXT_META
from agent.llm.client import stream_chat
from agent.llm.http import ConnectionPool
from agent.llm.models import DiscoveredWindow, ModelLimits, model_limits
from agent.llm.result import StreamResult
from agent.prompt import build_system_prompt
from agent.session.errors import StoreError
from agent.session.loading import load_session_messages
from agent.session.models import Message, Session
from agent.session.store import Store
from agent.session.titles import title_for
from agent.settings.schema import Settings
from agent.tools.background_tasks import BackgroundTasks
from agent.tools.base import ToolContext
from agent.tools.modes import user_meta
from agent.tools.permissions import Approver, Permissions
from agent.tools.registry import ToolRegistry, default_registry
from agent.turn.attachments import attach_mentioned
from agent.turn.budget_step import TurnContextHost, summary_cost
from agent.turn.events import Event, Notice, TurnError, TurnFinished, Usage, UserMessage
from agent.turn.hook_steps import stop_hook_goes_on, turn_hooks
from agent.turn.model_step import ModelStep
from agent.turn.policies import RunPolicy, TurnPolicies
from agent.turn.retry import RetryPolicy
from agent.turn.state import TurnState
from agent.turn.task_notes import note_endings, on_task_change
from agent.turn.tool_steps import ToolSteps, uninterruptible
from agent.turn.writer import SessionWriter

log = logging.getLogger("agent.turn.loop")

# A model that keeps calling tools without ever answering is stopped here.
MAX_STEPS_PER_TURN = 200

# Tools for the agent's own workflow (subagents, the todo list, plan mode's exit, skills) cost
# ~1,300 tokens in every request: a window this small (a 4,096-token local model) cannot spare
# them for the conversation, so there they are not offered (plan mode keeps its exit).
WORKFLOW_TOOLS = frozenset({"subagent", "todo-write", "exit-plan-mode", "skill-load"})
WORKFLOW_TOOLS_MIN_WINDOW = 16_000


class Agent:
    def __init__(
        self,
        *,
        settings: Settings,
        store: Store,
        session: Session,
        model: str,
        on_event: Callable[[Event], object],
        approver: Approver | None,
        subagents: bool = True,
        connections: ConnectionPool | None = None,
        guard: RunPolicy | None = None,
        effort: str | None = None,
    ) -> None:
        """`effort`: the `/effort` chosen for this agent's requests (a child gets its parent's)."""
        self.settings = settings
        # The fast path's pooled HTTP client (agent/llm/http.py): one for the agent and its
        # subagents, so their requests reuse the provider's connection; closed by the runtime.
        self.connections = connections if connections is not None else ConnectionPool()
        self.store = store
        # The head the session had when this process opened it: its first history load reads
        # up to there, so two processes continuing one session at once each go on from what
        # they opened (two branches), not from whatever the other stored meanwhile.
        self._opened_head = session.head_id
        self.on_event = on_event
        # Windows the models' server reported (Runtime asks it once per model; see `use_window`).
        self.discovered_windows: dict[str, DiscoveredWindow] = {}
        self.state = TurnState(
            session=session,
            model=model,
            # The session's request builder: what its builds remember, its cache policy.
            builder=RequestBuilder(settings, model, self.discovered_windows, self.connections, effort),
            registry=default_registry(settings.web),
            system_prompt=build_system_prompt(settings.workspace),
        )
        # Hooks (agent/hooks/): a subagent's child runs only the tool hooks and PreCompact.
        self.hooks = turn_hooks(
            settings,
            session_id=lambda: self.state.session.id,
            permissions=lambda: self.ctx.permissions,
            emit=self.emit,
            turn_events=subagents,
        )
        # Background tasks (terminal-execute's `background`): this session's; a child has its own.
        self.tasks = BackgroundTasks(on_task_change(lambda: self.registry, self.emit))
        self.ctx = ToolContext(
            workspace=settings.workspace,
            permissions=Permissions.from_settings(settings, self.hooks.notifying(approver)),
            command_timeout=settings.tools.command_timeout,
            max_command_timeout=settings.tools.max_command_timeout,
            max_read_lines=settings.tools.max_read_lines,
            max_file_bytes=settings.tools.max_file_bytes,
            web=settings.web,
            pdf_input=lambda: self.builder.sees_pdfs,
            hooks=self.hooks,
            tasks=self.tasks,
        )
        self.writer = SessionWriter(store, lambda: self.state.session, self._load_history)
        # Limits of an unattended run, asked before each request and tool call (headless only).
        self.policies = TurnPolicies()
        self._guard: RunPolicy | None = None
        self.guard = guard
        if subagents:  # a subagent's own child runs none (agent/turn/children.py)
            self._offer_subagents()
        self._offer_skills()
        self._attach_context_files()
        self.set_model(model)
        self.retry = RetryPolicy(settings.llm, self.emit)
        self.tool_steps = ToolSteps(
            state=self.state, ctx=self.ctx, writer=self.writer, policies=self.policies, emit=self.emit
        )
        self.context_host = TurnContextHost(
            settings=settings,
            state=self.state,
            writer=self.writer,
            ctx=self.ctx,
            hooks=self.hooks,
            emit=self.emit,
            offered_tools=self.offered_tools,
            budget=lambda: self.budget,
            send=self.complete,
        )
        self.model_step = ModelStep(
            state=self.state,
            writer=self.writer,
            host=self.context_host,
            retry=self.retry,
            policies=self.policies,
            emit=self.emit,
            context=settings.context,
            offered_tools=self.offered_tools,
            budget=lambda: self.budget,
            window=lambda: self.limits.context_window,
        )
        # Tell the model when the user switched the permission mode (a subagent's is fixed:
        # its brief says what it may do).
        self.announce_mode = True

    # -- what the helpers share (agent/turn/state.py), read and set here too -------------
    @property
    def session(self) -> Session:
        return self.state.session

    @session.setter
    def session(self, session: Session) -> None:
        self.state.session = session

    @property
    def model(self) -> str:
        return self.state.model

    @property
    def builder(self) -> RequestBuilder:
        return self.state.builder

    @property
    def history(self) -> list[Message] | None:
        return self.state.history

    @history.setter
    def history(self, history: list[Message] | None) -> None:
        self.state.history = history

    @property
    def session_cost(self) -> float:
        return self.state.session_cost

    @property
    def registry(self) -> ToolRegistry:
        return self.state.registry

    @registry.setter
    def registry(self, registry: ToolRegistry) -> None:
        self.state.registry = registry

    @property
    def system_prompt(self) -> str:
        return self.state.system_prompt

    @system_prompt.setter
    def system_prompt(self, prompt: str) -> None:
        self.state.system_prompt = prompt

    @property
    def permissions(self) -> Permissions:
        return self.ctx.permissions

    @permissions.setter
    def permissions(self, permissions: Permissions) -> None:
        self.ctx.permissions = permissions

    @property
    def guard(self) -> RunPolicy | None:
        """The limits of an unattended run (headless only): one of the turn's policies."""
        return self._guard

    @guard.setter
    def guard(self, guard: RunPolicy | None) -> None:
        self.policies.replace(self._guard, guard)
        self._guard = guard

    # -- configuration ------------------------------------------------------------
    def set_model(self, model: str) -> None:
        self.state.model = model
        self.builder.set_model(model)
        self._limits: ModelLimits | None = None
        self._budget: Budget | None = None

    @property
    def limits(self) -> ModelLimits:
        """Looked up on first use: litellm's model table is not needed to show a session."""
        if self._limits is None:
            self._limits = model_limits(self.settings, self.model, self.discovered_windows.get(self.model))
        return self._limits

    def use_window(self, model: str, found: DiscoveredWindow) -> None:
        """The window `model`'s server reported (agent/llm/models.py::probe_window): the
        limits and budget of that model are looked up again with it."""
        self.discovered_windows[model] = found
        if model == self.model:
            self._limits = None
            self._budget = None

    @property
    def budget(self) -> Budget:
        """Seed 001's threshold and allowed tokens for the current model."""
        if self._budget is None:
            limits = self.limits
            self._budget = budget_for(
                self.settings, self.model, window=limits.context_window, max_output_tokens=limits.max_output_tokens
            )
        return self._budget

    def offered_tools(self) -> list[dict[str, Any]]:
        """The tool definitions a request carries: the registry's, less the workflow tools in a
        window too small to spare them."""
        tools = self.registry.definitions()
        if self.limits.context_window >= WORKFLOW_TOOLS_MIN_WINDOW:
            return tools
        kept = {"exit-plan-mode"} if self.permissions.mode == "plan" else set()
        return [t for t in tools if t["function"]["name"] not in WORKFLOW_TOOLS - kept]

    def _offer_subagents(self) -> None:
        """The `subagent` tool, listing the agents this workspace defines (agent/subagents/); again
        before each turn, its description (in the cached prefix) changed only when the agents did."""
        from agent.subagents.tool import SubagentTool
        from agent.turn.children import ChildRunner

        offered = self.registry.get("subagent")
        if isinstance(offered, SubagentTool):
            if offered.refresh(self.settings.workspace):
                self.registry.set_group("subagents", [offered])  # the registry's definitions made again
            return

        def make_child(
            *, session: Session, model: str, on_event: Callable[[Event], None], approver: Approver | None
        ) -> Agent:
            return Agent(
                settings=self.settings,
                store=self.store,
                session=session,
                model=model,
                on_event=on_event,
                approver=approver,
                subagents=False,
                connections=self.connections,
                effort=self.builder.effort,
            )

        runner = ChildRunner(
            settings=self.settings,
            state=self.state,
            writer=self.writer,
            ctx=self.ctx,
            emit=self.emit,
            guard=lambda: self.guard,
            make_agent=make_child,
            max_parallel=self.settings.agents.max_parallel,
        )
        tool = SubagentTool({}, runner)
        tool.refresh(self.settings.workspace)
        self.registry.set_group("subagents", [tool])

    def _offer_skills(self) -> None:
        """The `skill-load` tool listing this workspace's skills (agent/skills/); again before each
        turn, its description (in the cached prefix) changed only when the skills did. No skill, no tool."""
        from agent.skills.catalog import refreshed
        from agent.skills.tool import SkillLoad

        found = refreshed(getattr(self, "skills", None), self.settings.workspace)  # None at the first call
        if found is None:
            return
        self.skills = found
        self.permissions.read_roots = found.read_roots()
        offered = self.registry.get("skill-load")
        if isinstance(offered, SkillLoad):
            before = offered.description
            offered.update(found)
            if offered.description != before or not found.entries():
                self.registry.set_group("skills", [offered] if found.entries() else [])
        elif found.entries():  # a skill only the user invokes (/name) is not the model's
            self.registry.set_group("skills", [SkillLoad(found)])

    def _attach_context_files(self) -> None:
        """The context-* tools read this session's large outputs (seed 004)."""
        from agent.context.files.manager import ContextFiles

        self.ctx.context_files = ContextFiles(
            self.store,
            self.session.id,
            settings=self.settings.context,
            # The registry of the moment: a front end's (an editor's reads) or a child's replaces it.
            tool_definitions=lambda: self.registry.definitions(),
        )

    def switch_session(self, session: Session) -> None:
        self.state.session = session
        self._opened_head = session.head_id
        self._attach_context_files()
        effort = self.builder.effort  # the user's /effort holds for the session they switch to
        self.state.builder = RequestBuilder(
            self.settings, self.model, self.discovered_windows, self.connections, effort
        )
        self.state.history = None
        self.state.session_cost = 0.0
        self.permissions.always.clear()
        self.tasks.kill_all()  # a task ends with its session

    def emit(self, event: Event) -> None:
        try:
            self.on_event(event)
        except Exception:  # a rendering bug must never break the loop or lose data
            log.exception("event handler failed for %s", event.type)

    async def _load_history(self) -> list[Message]:
        state = self.state
        if state.history is None:
            head, self._opened_head = self._opened_head, None  # later loads: the database's head
            state.history = await load_session_messages(self.store, state.session.id, head)
            state.session_cost = sum(float(m.meta.get("cost") or 0) + summary_cost(m) for m in state.history)
            await state.builder.images.load(state.history, self.store.get_blob)  # requests carry their bytes
        return state.history

    async def current_history(self) -> list[Message]:
        """A copy of the active path as the loop holds it."""
        return await self.writer.history()

    # -- one turn -------------------------------------------------------------------
    async def run_turn(self, text: str, *, typed: str | None = None) -> None:
        """One turn for `text`; `typed`: what the user typed when `text` is a command's expansion
        (the session's title is that, agent/session/titles.py)."""
        await self._load_history()
        if not self.session.agent:  # skills and agents added since the last turn (a child keeps its parent's)
            if self.registry.get("subagent") is not None:
                self._offer_subagents()
            self._offer_skills()
        status = "ok"
        stops = 0  # times a Stop hook sent the model back to work this turn
        try:
            hooked = await self.hooks.user_prompt(text)  # UserPromptSubmit: may refuse the prompt (HookBlocked)
            mode = user_meta(self.history or [], self.permissions.mode) if self.announce_mode else {}
            meta = {**await self._attach_images(text), **mode, **({HOOK_CONTEXT_META: hooked} if hooked else {})}
            await note_endings(self.tasks, self.writer)  # background tasks that ended unseen: one line each
            user = await self.writer.append(Message(role="user", content=text, meta=meta))
            self.emit(UserMessage(message=user))
            if not self.session.title:
                title = title_for(typed or text)
                self.session = await self.writer.persist(self.store.update_session(self.session, title=title))
            if not self.session.agent:  # `@path`s (a subagent's task is the model's words, not the user's)
                await self._attach_mentioned(text)
            for _ in range(MAX_STEPS_PER_TURN):
                limit = self.policies.before_request(self.session_cost)
                if limit is not None:
                    self.emit(limit)
                    status = "limit"
                    break
                assistant = await self.model_step.run()
                self.policies.after_request(self.session_cost)
                if assistant is None:
                    status = "error"
                    break
                if not assistant.tool_calls:
                    if stops < MAX_STOP_CONTINUES and await stop_hook_goes_on(
                        self.hooks, self.writer, active=stops > 0
                    ):
                        stops += 1  # a Stop hook sent the model back to work, with its reason
                        continue
                    break
                if await self.tool_steps.run(assistant):
                    status = "limit"
                    break
            else:
                self.emit(TurnError(message=f"Stopped after {MAX_STEPS_PER_TURN} tool steps in one turn."))
                status = "error"
        except asyncio.CancelledError:
            status = "interrupted"
            # Kill what still runs and answer every open tool call, so history stays valid.
            await uninterruptible(self.tool_steps.after_interrupt())
        except HookBlocked as exc:  # nothing was stored; the hook's reason is for the user
            self.emit(TurnError(message=str(exc)))
            status = "error"
        except StoreError as exc:  # already a sentence for the user (a full disk, …)
            log.exception("turn failed")
            self.emit(TurnError(message=str(exc)))
            status = "error"
        except Exception as exc:  # never a traceback on screen; the log has it
            log.exception("turn failed")
            self.emit(TurnError(message=f"{type(exc).__name__}: {exc}"))
            status = "error"
        self.emit(TurnFinished(status=status))

    async def _attach_images(self, text: str) -> dict[str, Any]:
        """A prompt's images (agent/images.py), stored before the message that names them."""
        from agent.images import prompt_images

        found = await asyncio.to_thread(
            prompt_images, text, self.settings.workspace, model=self.model, vision=self.builder.sees_images
        )
        for message, kind in found.notices:  # what was attached, and what was not and why
            self.emit(Notice(message=message, kind=kind))
        await self.writer.persist(self.builder.images.keep([a.data for a in found.attachments], self.store.put_blobs))
        return found.meta()

    async def _attach_mentioned(self, text: str) -> None:
        """The prompt's `@path`s, stored as the reads the model would make (agent/turn/attachments.py)."""
        await attach_mentioned(
            text,
            workspace=self.settings.workspace,
            registry=self.registry,
            ctx=self.ctx,
            counter=self.builder.counter,
            images=self.builder.images,
            writer=self.writer,
            emit=self.emit,
        )

    async def complete(self, model: str, messages: list[dict[str, Any]]) -> StreamResult:
        """One request outside a turn's stream (the condense summary): the same client, key,
        timeout, temperature and retries as a turn, with the countdown shown."""
        side = self.policies.before_side_request()
        if side is not None:  # a summary is a request too: --max-turns bounds them all
            raise CondenseError(side.message)
        request = self.builder.summary_request(model, messages)
        return await self.retry.run(lambda: stream_chat(request))

    async def compact(self, instructions: str | None = None) -> None:
        """`/compact [instructions]`: condense the conversation now (seed 001, manual trigger)."""
        status = "ok"
        try:
            history = await self._load_history()
            build = await self.context_host.build(history, None)
            await compact(history, self.context_host, instructions=instructions or None, tokens=build.tokens.total)
            after = await self.context_host.build(await self._load_history(), None)
            self.emit(
                Usage(
                    context_tokens=after.tokens.total,
                    context_window=self.limits.context_window,
                    session_cost=self.session_cost,
                )
            )
        except CondenseError as exc:
            self.emit(TurnError(message=str(exc)))
            status = "error"
        except asyncio.CancelledError:
            await self.writer.settle()
            status = "interrupted"
        except Exception as exc:  # never a traceback on screen; the log has it
            log.exception("compact failed")
            self.emit(TurnError(message=f"{type(exc).__name__}: {exc}"))
            status = "error"
        self.emit(TurnFinished(status=status))
